"""One :class:`EvalConfig` per model, from the command line and an optional ``--config`` file.

Precedence, highest first: a flag given on the command line, the model's own
``[[models]]`` entry, the file's top level, :class:`EvalConfig`'s default. The
layers are nested dicts shaped like the config (:mod:`recworld.console.options`
builds them from the declarations), so this module names no setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recworld.console.options import Given, build, layered
from recworld.errors import ConfigError
from recworld.evaluation.config import EvalConfig
from recworld.evaluation.config_file import EvalFile, ModelEntry, read_eval_file

__all__ = ["resolve_configs"]


def resolve_configs(
    suite: Path,
    models: Sequence[str] = (),
    *,
    given: Given | None = None,
    config_file: Path | None = None,
    config: type[EvalConfig] = EvalConfig,
) -> list[EvalConfig]:
    """The runs ``recworld eval`` was asked for, each validated; errors name the flag or the file key."""
    file = read_eval_file(config_file, config) if config_file is not None else None
    entries = _entries(models, file)
    base: dict[str, Any] = {"suite_dir": suite}
    if config_file is not None:
        base["config_file"] = config_file.resolve()
    typed = given.nested() if given is not None else {}
    configs = []
    for entry in entries:
        if file is not None:  # a bad value in the file is named by its key there
            build(config, layered(file.top, {**base, "model": entry.values["model"]}), source=file.path)
            build(config, layered(entry.values, file.top, base), source=entry.source)
        configs.append(build(config, layered(typed, entry.values, file.top if file else {}, base)))
    if len(configs) > 1 and any(c.out_dir is not None for c in configs):
        raise ConfigError(
            f"--out names one run folder, and {len(configs)} models were given; leave --out out "
            "(each run goes to SUITE/runs/MODEL__MODE__VARIANT)"
        )
    return configs


def _entries(models: Sequence[str], file: EvalFile | None) -> list[ModelEntry]:
    given = [m.strip() for m in models if m.strip()]
    if given:
        return [ModelEntry("--model", {"model": m}) for m in given]
    if file is not None and file.models:
        return file.models
    raise ConfigError("no model: give --model SPEC (repeatable) or a --config file with [[models]]")
