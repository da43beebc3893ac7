"""One :class:`EvalConfig` per model, from the command line and an optional ``--config`` file.

Precedence, highest first: a flag given on the command line, the model's own
``[[models]]`` entry, the file's top level, :class:`EvalConfig`'s default. The
CLI passes ``None`` for every flag not given, which is what lets a file value
through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from recworld.console.app import option_error
from recworld.errors import ConfigError
from recworld.evaluation.config import EvalConfig
from recworld.evaluation.config_file import EvalFile, ModelEntry, read_eval_file

__all__ = ["FLAGS", "parse_model_options", "resolve_configs"]

# Config field -> the flag a user typed, so an error names what they can change.
FLAGS = {
    "timeout_s": "--timeout",
    "backoff_base_s": "--backoff",
    "backoff_max_s": "--backoff-max",
    "out_dir": "--out",
    "model_options": "--model-option",
    "model": "--model",
}
_SHARED = (
    "limit",
    "measures",
    "mode",
    "variant",
    "orders",
    "seed",
    "fail_on_error",
    "engine",
    "ray_address",
    "replicas",
)
_PER_MODEL = ("base_url", "api_key_env", "max_tokens", "temperature", "system")
# CLI name -> RunnerConfig field.
_ENGINE = {
    "concurrency": "concurrency",
    "timeout": "timeout_s",
    "max_retries": "max_retries",
    "backoff": "backoff_base_s",
    "backoff_max": "backoff_max_s",
}


def parse_model_options(pairs: Sequence[str]) -> dict[str, str]:
    """``["batch_size=8"]`` -> ``{"batch_size": "8"}``; the backend's class types the values later."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"invalid value for --model-option: {pair!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _models(values: Mapping[str, Any], file: EvalFile | None) -> list[ModelEntry]:
    given = [m for m in values.get("model") or [] if m.strip()]
    models = [ModelEntry(spec=m.strip()) for m in given] if given else list(file.models if file else [])
    if not models:
        raise ConfigError("no model: give --model SPEC (repeatable) or a --config file with [[models]]")
    if values.get("out") is not None and len(models) > 1:
        raise ConfigError(
            f"--out names one run folder, and {len(models)} models were given; leave --out out "
            "(each run goes to SUITE/runs/MODEL__MODE__VARIANT)"
        )
    return models


def _measures(raw: str | None, file: EvalFile | None) -> tuple[str, ...] | None:
    if raw:
        return tuple(m.strip() for m in raw.split(",") if m.strip()) or None
    return tuple(file.measures) if file and file.measures else None


def resolve_configs(values: Mapping[str, Any]) -> list[EvalConfig]:
    """The runs ``recworld eval`` was asked for, each validated; errors name the flag or file field."""
    from recworld.runner import RunnerConfig

    path: Path | None = values.get("config")
    file = read_eval_file(path) if path is not None else None
    engine = {
        field: v
        for cli, field in _ENGINE.items()
        if (v := _first(values.get(cli), _file(file, cli))) is not None
    }
    try:
        runner = RunnerConfig(**engine, progress=values.get("progress", True), seed=_seed(values, file))
    except ValidationError as exc:
        raise option_error(exc, FLAGS) from None
    shared = {k: v for k in _SHARED if (v := _first(values.get(k), _file(file, k))) is not None}
    shared["measures"] = _measures(values.get("measures"), file)
    cli_options = parse_model_options(values.get("model_option") or [])
    configs = []
    for entry in _models(values, file):
        own = {
            k: v
            for k in _PER_MODEL
            if (v := _first(values.get(k), getattr(entry, k), _file(file, k))) is not None
        }
        try:
            configs.append(
                EvalConfig(
                    suite_dir=values["suite_dir"],
                    model=entry.spec,
                    out_dir=values.get("out"),
                    model_options={**entry.options, **cli_options},
                    config_file=path.resolve() if path is not None else None,
                    runner=runner,
                    **shared,
                    **own,
                )
            )
        except ValidationError as exc:
            raise option_error(exc, FLAGS) from None
    return configs


def _file(file: EvalFile | None, key: str) -> Any:
    return None if file is None else getattr(file, key, None)


def _seed(values: Mapping[str, Any], file: EvalFile | None) -> int:
    seed = _first(values.get("seed"), _file(file, "seed"))
    return 0 if seed is None else int(seed)
