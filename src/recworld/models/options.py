"""Typed options per backend: what ``ModelConfig.options`` may hold for each ``backend:`` spec.

``ModelConfig`` carries what every backend shares (base URL, key variable,
context size, threads, seed). What only one backend understands goes in
``ModelConfig.options`` as a plain mapping (from Python, or from
``--model-option key=value`` on the command line), and the backend validates it
against its class here when it is created. Every class forbids unknown keys,
so a typo (``batch_szie``) fails at once with a :class:`ConfigError` naming the
option and the backend, instead of being silently ignored for a whole run.

Values given as strings (the command line) are coerced by pydantic's lax
mode: ``"8"`` becomes 8, ``"true"`` becomes True, and a JSON object string
becomes a dict where a dict is expected.

This module imports nothing heavy, so a CLI can list and check options without
loading a backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from recworld.console.options import Operational
from recworld.errors import ConfigError, DataError
from recworld.io import parse_json
from recworld.records import MAX_SECONDS, Settings

MIB = 1 << 20
# The largest reply a user may allow (a body is held whole once read) and the widest batch or pool.
MAX_RESPONSE_BYTES = 1 << 32
MAX_BATCH = 1 << 16
MAX_CONNECTIONS = 4096


def operational_options(cls: type[BaseModel]) -> frozenset[str]:
    """The options of ``cls`` that never change an answer (marked ``Operational``): not a run's identity."""
    fields = cls.model_fields.items()
    return frozenset(name for name, info in fields if any(isinstance(m, Operational) for m in info.metadata))


class BackendOptions(Settings):
    """Base of every options class: unknown keys are an error, instances are immutable.

    Its numbers are finite and bounded (:class:`~recworld.records.Settings`), so
    ``--model-option connect_timeout_s=inf`` is a ConfigError naming the option.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoOptions(BackendOptions):
    """A backend that takes no options (baselines, the scripted test double)."""


class OpenAIOptions(BackendOptions):
    """``openai:``: how requests travel and how large a reply may be."""

    # "auto": the aiohttp transport for a base_url without a proxy variable set, else the SDK.
    transport: Annotated[Literal["auto", "aiohttp", "sdk"], Operational()] = "auto"
    # Open connections to the server at most (the aiohttp transport).
    max_connections: Annotated[int, Field(ge=1, le=MAX_CONNECTIONS), Operational()] = 256
    # OpenAI's newer models refuse ``max_tokens`` and want ``max_completion_tokens``.
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    # A reply body larger than this is refused (a sample error), never held in memory whole.
    max_response_bytes: Annotated[int, Field(ge=1024, le=MAX_RESPONSE_BYTES), Operational()] = 16 * MIB
    # Seconds to open a connection; the runner's timeout bounds the whole request.
    connect_timeout_s: Annotated[float, Field(gt=0, le=MAX_SECONDS), Operational()] = 30.0


class LlamaCppOptions(BackendOptions):
    """``llamacpp:``: everything it needs is on ModelConfig (n_ctx, n_threads, seed)."""


class TorchOptions(BackendOptions):
    """Where a transformers model runs: ``device`` (default cuda when present) and ``dtype``."""

    device: str | None = None
    dtype: str = "auto"  # "auto" or a torch dtype name: "float32", "bfloat16", ...


class HFOptions(TorchOptions):
    """``hf:``: placement plus the generation micro-batch."""

    batch_size: int = Field(default=8, ge=1, le=MAX_BATCH)
    batch_wait_s: Annotated[float, Field(ge=0, le=60), Operational()] = 0.01


class HFVisionOptions(TorchOptions):
    """``hf-vision:``: placement only (requests run one at a time)."""


class VLLMOptions(BackendOptions):
    """``vllm:``: arguments for ``vllm.LLM`` plus the generation micro-batch."""

    engine_args: dict[str, Any] = Field(default_factory=dict)
    batch_size: int = Field(default=64, ge=1, le=MAX_BATCH)
    batch_wait_s: Annotated[float, Field(ge=0, le=60), Operational()] = 0.02

    @field_validator("engine_args", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        """``--model-option engine_args='{"tensor_parallel_size": 2}'`` arrives as a string."""
        if isinstance(value, str):
            try:
                return parse_json(value)  # strict: no NaN or Infinity in what run.json stores
            except DataError as exc:
                raise ValueError(f"not a JSON object: {exc}") from None
        return value


Options = TypeVar("Options", bound=BackendOptions)


def parse_options(cls: type[Options], options: Mapping[str, Any], backend: str) -> Options:
    """``options`` validated against ``cls``; a bad or unknown key is a ConfigError naming it."""
    try:
        return cls.model_validate(dict(options))
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(p) for p in first.get("loc") or ()) or "?"
        known = ", ".join(sorted(cls.model_fields)) or "none"
        if first.get("type") == "extra_forbidden":
            from recworld.console import suggestion

            hint = suggestion(name, cls.model_fields)
            raise ConfigError(
                f"the {backend} backend has no option {name!r}{hint} (its options: {known})"
            ) from None
        raise ConfigError(f"the {backend} backend's option {name!r}: {first.get('msg')}") from None


class ScriptedOptions(BackendOptions):
    """``scripted``: a test double's knobs: a delay per answer and a log of every call it answers."""

    delay_s: Annotated[float, Field(ge=0, le=MAX_SECONDS), Operational()] = 0.0
    # Appends one line per call (the question id, else the last message) to this file.
    calls_log: Annotated[Path | None, Operational()] = None


class SentenceTransformerOptions(BackendOptions):
    """``minilm`` and ``st:NAME`` embedders: where the model runs and how many texts per call."""

    device: str = "cpu"
    batch_size: int = Field(default=64, ge=1, le=MAX_BATCH)


class OpenAIEmbedOptions(BackendOptions):
    """``openai:MODEL`` embedder: the chat backend's transport settings plus texts per request."""

    transport: Annotated[Literal["auto", "aiohttp", "sdk"], Operational()] = "auto"
    max_connections: int = Field(default=64, ge=1, le=MAX_CONNECTIONS)
    max_response_bytes: int = Field(default=64 * MIB, ge=1024, le=MAX_RESPONSE_BYTES)
    connect_timeout_s: Annotated[float, Field(gt=0, le=MAX_SECONDS), Operational()] = 30.0
    batch_size: int = Field(default=128, ge=1, le=MAX_BATCH)
    # Ask the server for vectors of this length (models that support it, e.g. text-embedding-3-*).
    dimensions: int | None = Field(default=None, ge=1, le=MAX_BATCH)


class ItemKNNOptions(BackendOptions):
    """``itemknn``: how many most similar neighbours vote for a user-user answer."""

    neighbours: int = Field(default=50, ge=1, le=1 << 20)
