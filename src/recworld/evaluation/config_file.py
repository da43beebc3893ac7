"""``recworld eval --config FILE.toml``: settings and several models in one checked file.

The keys are the command line's option names with ``_`` (``max_retries``,
``timeout``, ``model_options``), generated from :class:`EvalConfig` like the
options themselves, so moving a setting between the two is a copy and a new
setting is a new key without an edit here. A value given on the command line
wins over the file; a model's own ``[[models]]`` entry wins over the file's top
level, and may set any key the top level may::

    limit = 200
    measures = ["assoc_rule", "kg_movie_genre"]
    temperature = 0.0

    [[models]]
    spec = "openai:gpt-4o-mini"

    [[models]]
    spec = "openai:qwen2.5-7b-instruct"
    base_url = "http://127.0.0.1:8000/v1"
    api_key_env = "LOCAL_KEY"
    max_tokens = 512
    system = "You are a movie expert."
    model_options = { max_tokens_param = "max_completion_tokens" }

An unknown key is one error naming the file, the key and the closest known key
(``eval.toml: [[models]] #2: unknown key 'temprature' (did you mean
'temperature'?)``); a bad value names the key the same way.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recworld.capped import SETTINGS_LIMIT, read_capped_text
from recworld.console.options import from_file
from recworld.errors import ConfigError, DataError
from recworld.evaluation.config import EvalConfig

__all__ = ["EvalFile", "read_eval_file"]


@dataclass(frozen=True)
class ModelEntry:
    """One ``[[models]]`` table: its place in the file (for errors) and its settings, nested."""

    source: str  # "eval.toml: [[models]] #2"
    values: dict[str, Any]  # with "model": the entry's spec


@dataclass(frozen=True)
class EvalFile:
    """The whole file: settings shared by every model (nested, like the config), and the models."""

    path: Path
    top: dict[str, Any] = field(default_factory=dict)
    models: list[ModelEntry] = field(default_factory=list)


def read_eval_file(path: Path, config: type[EvalConfig] = EvalConfig) -> EvalFile:
    """The file's layers, each key checked against ``config``; bad TOML or keys name the file."""
    text = read_capped_text(path, limit=SETTINGS_LIMIT, missing="config file not found")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"not valid TOML: {exc}", path=path) from None
    top = from_file(config, data, source=path, extra=["models"])
    raw_models = top.pop("models", [])
    if not isinstance(raw_models, list) or not all(isinstance(m, dict) for m in raw_models):
        raise ConfigError(f"{path}: 'models' must be [[models]] tables, each with a spec")
    return EvalFile(path, top, [_entry(path, i, m, config) for i, m in enumerate(raw_models, start=1)])


def _entry(path: Path, number: int, raw: dict[str, Any], config: type[EvalConfig]) -> ModelEntry:
    source = f"{path}: [[models]] #{number}"
    spec = raw.get("spec")
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"{source}: 'spec' is missing (the model spec, e.g. spec = \"openai:gpt-4o-mini\")")
    values = from_file(config, {k: v for k, v in raw.items() if k != "spec"}, source=source, extra=[])
    return ModelEntry(source, {**values, "model": spec.strip()})
