"""``recworld eval --config FILE.toml``: settings and several models in one checked file.

The file uses the command line's own option names (``max_retries``,
``timeout``), so moving a setting between the two is a copy. A value given on
the command line wins over the file; a model's own entry wins over the
file's top-level value::

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
    options = { max_tokens_param = "max_completion_tokens" }

An unknown key or a bad value is one error naming the file and the field
(``eval.toml: field 'models.1.temperature': ...``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recworld.capped import SETTINGS_LIMIT, read_capped_text
from recworld.chat import AnswerMode
from recworld.errors import DataError, from_validation

__all__ = ["EvalFile", "ModelEntry", "read_eval_file"]


class ModelEntry(BaseModel):
    """One ``[[models]]`` table: a spec and what differs for it."""

    model_config = ConfigDict(extra="forbid")

    spec: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    system: str | None = None
    # Backend options (``--model-option``), checked against the backend's class before the run.
    options: dict[str, Any] = Field(default_factory=dict)


class EvalFile(BaseModel):
    """The whole file: run settings shared by every model, and the models."""

    model_config = ConfigDict(extra="forbid")

    models: list[ModelEntry] = Field(default_factory=list)
    measures: list[str] | None = None
    limit: int | None = Field(default=None, ge=1)
    mode: AnswerMode | None = None
    variant: str | None = None
    orders: int | None = Field(default=None, ge=1, le=24)
    seed: int | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    system: str | None = None
    concurrency: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)
    fail_on_error: float | None = Field(default=None, ge=0.0, le=1.0)


def read_eval_file(path: Path) -> EvalFile:
    """The checked file; a missing file, bad TOML or bad field is a DataError naming it."""
    text = read_capped_text(path, limit=SETTINGS_LIMIT, missing="config file not found")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"not valid TOML: {exc}", path=path) from None
    try:
        return EvalFile.model_validate(data)
    except ValidationError as exc:
        raise from_validation(exc, path=path) from None
