"""How to reach one model or one embedder: :class:`SessionConfig` and :class:`EmbedderConfig`.

Both nest the same two configs, so a chat model and an embedder take the same
settings in the same places (``backend.options``, ``runner.timeout_s``).

A :class:`SessionConfig` is built once per model a stage asks (the generator, the
answering model, the judge, a context setting's own model). It does not re-declare what the
backend and the Runner already declare: ``backend`` *is* the backend's
:class:`~recworld.models.ModelConfig` (server, key variable, window, backend
options) and ``runner`` *is* the :class:`~recworld.runner.RunnerConfig`
(concurrency, timeout, retries, backoff seed), with LUNAR's own defaults
(:data:`LUNAR_RUNNER`). What only LUNAR has sits beside them: tries per structured
output, the reply cap, compact decoding and ``--retry-failures``.

``model`` is a spec string (``openai:gpt-4o-mini``) or any object that implements
the :class:`~recworld.models.Model` protocol: a model object is used as it is and
never closed by LUNAR (:func:`recworld.models.resolve_model`). Written into a run
record, a model object is named by its identity (:func:`model_name`), so the record
reads back as a spec string. Both configs call that spec ``name``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import ConfigDict, Field, PlainSerializer, PlainValidator, model_validator

from recworld.errors import ConfigError
from recworld.models import Embedder, Model, ModelConfig, backend_of, object_name
from recworld.models.registry import spec_forms
from recworld.records import MAX_TOKENS, FrozenRecord, Settings
from recworld.runner import RunnerConfig

# Local CPU models under load can need minutes per structured call; a runner timeout
# shorter than that retries forever behind the busy model, so the timeout is generous.
# LUNAR draws its own progress per piece (recworld.lunar.llm.tracking), never the Runner's.
LUNAR_RUNNER = RunnerConfig(concurrency=4, timeout_s=900.0, max_retries=6, progress=False)


def model_name(model: str | Model | Embedder) -> str:
    """The spec a run records for a model or embedder: the string, or :func:`~recworld.models.object_name`."""
    if isinstance(model, str):
        return model
    return object_name(model)


def _model_ref(value: Any) -> str | Model:
    if isinstance(value, str):
        return value
    if isinstance(value, Model):
        return value
    raise ValueError(
        "expected a model spec string or an object with identity, supports, complete and aclose; "
        f"got {type(value).__name__}"
    )


ModelRef = Annotated[
    str | Model,
    PlainValidator(_model_ref),
    PlainSerializer(model_name, return_type=str),
    Field(description="Model spec (or, from Python, a Model object)."),
]

_BACKEND_KEYS = ("base_url", "api_key_env", "allow_insecure_http", "n_ctx")
_RUNNER_KEYS = ("concurrency", "timeout_s", "max_retries")


class SessionConfig(FrozenRecord, Settings):
    """One model a stage asks: its spec or object, how to reach it, how to send, how to parse.

    Each model has its own ``backend.base_url`` and ``backend.api_key_env``: a key goes
    only to the server of the model it belongs to. ``api_key_env`` is the NAME of the
    variable; the key itself is never stored.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: ModelRef
    backend: ModelConfig = Field(default_factory=ModelConfig)
    runner: RunnerConfig = LUNAR_RUNNER
    max_attempts: Annotated[
        int,
        Field(ge=1, le=10, description="Tries per structured output before giving up on that piece."),
    ] = 3
    max_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS, description="Reply cap of a structured call.")] = (
        512
    )
    # The model's context window in tokens, when the backend cannot say (an API model missing from
    # the models package's table, a server that reports none). What the model reports wins.
    context_window: Annotated[
        int | None,
        Field(
            ge=256,
            le=MAX_TOKENS,
            description="Context window of the model in tokens, when its backend cannot say.",
        ),
    ] = None
    # None: compact decoding (short strings, fixed-length arrays) for local llama.cpp models,
    # which loop under greedy decoding of a full schema; full schemas for servers.
    compact: Annotated[
        bool | None,
        Field(description="Decode structured outputs with short strings and fixed-length arrays."),
    ] = None
    # A cached reply that is rejected again is asked anew past the cache (Runner.complete's refresh).
    # Off by default, so a rerun replays cached replies for free.
    retry_failures: Annotated[
        bool,
        Field(
            description="Ask again, past the cache, every piece whose cached reply was rejected "
            "(a plain rerun replays cached replies)."
        ),
    ] = False

    @model_validator(mode="before")
    @classmethod
    def _on_lunar_defaults(cls, data: Any) -> Any:
        """Runner settings given as a dict fill in over :data:`LUNAR_RUNNER`, not the Runner's class defaults.

        Also reads the flat form runs before ``recworld.lunar.manifest/3`` wrote
        (``base_url``, ``concurrency``, ``seed``, ... beside ``model``).
        """
        if not isinstance(data, dict):
            return data
        data = dict(data)
        seed = data.pop("seed", None)
        backend = {k: data.pop(k) for k in _BACKEND_KEYS if k in data}
        runner = {k: data.pop(k) for k in _RUNNER_KEYS if k in data}
        if seed is not None:
            backend["seed"] = runner["seed"] = seed
        if backend:
            data["backend"] = {**dict(data.get("backend") or {}), **backend}
        given = data.get("runner")
        if runner or isinstance(given, Mapping):
            data["runner"] = {**LUNAR_RUNNER.model_dump(), **dict(given or {}), **runner}
        return data

    @property
    def name(self) -> str:
        """The model's spec as runs record it (folder names, run records, collection names)."""
        return model_name(self.model)

    @property
    def compact_decoding(self) -> bool:
        """``compact`` when set; else what the model's backend declares (llama.cpp: on, servers: off).

        A model object is judged by the backend its identity names; one whose backend is
        not registered (a caller's own model) decodes the full schema.
        """
        if self.compact is not None:
            return self.compact
        try:
            return backend_of(self.name).compact_decoding
        except ConfigError:  # an unknown backend fails when a spec is opened, with its own message
            return False

    def seeded(self, seed: int) -> SessionConfig:
        """This session with ``seed`` for the backend's sampling and the Runner's backoff jitter."""
        backend = self.backend.model_copy(update={"seed": seed})
        runner = self.runner.model_copy(update={"seed": seed})
        return self.model_copy(update={"backend": backend, "runner": runner})


def _embedder_ref(value: Any) -> str | Embedder:
    if isinstance(value, str | Embedder):
        return value
    raise ValueError(
        "expected an embedder spec string or an embedder object with identity, async embed and aclose "
        f"(recworld.models.Embedder); got {type(value).__name__}"
    )


EmbedderRef = Annotated[
    str | Embedder,
    PlainValidator(_embedder_ref),
    PlainSerializer(model_name, return_type=str),
    Field(
        description=f"Embedder spec. Forms: {spec_forms('embedding')}, or a plugin's spec "
        "(from Python, also an Embedder object)."
    ),
]

# An embedder's own runner: the Runner's concurrency, a two-minute attempt, no progress bar of its own.
EMBED_RUNNER = RunnerConfig(timeout_s=120.0, max_retries=6, progress=False)
# The flat form runs wrote before the embedder nested its model and runner configs.
_EMBED_BACKEND_KEYS = ("base_url", "api_key_env", "allow_insecure_http")
_EMBED_RUNNER_KEYS = ("timeout_s", "max_retries")


class EmbedderConfig(FrozenRecord, Settings):
    """A text embedder, as a :class:`SessionConfig` is a chat model: what it is, how to reach it, how to send.

    ``model`` is a spec (``minilm``, ``st:NAME``, ``openai:MODEL``, a plugin's) or,
    from Python, any :class:`recworld.models.Embedder` object (``identity``,
    ``async embed``, ``aclose``): an object is used as it is and never closed by
    LUNAR, and a run record names it by its identity (:func:`model_name`; :attr:`name`).
    ``backend`` *is* the models package's :class:`~recworld.models.ModelConfig`
    (server, key variable, and ``options`` such as ``device``, ``batch_size`` or
    ``dimensions``, checked against the backend's options class when the embedder
    is made) and ``runner`` *is* the :class:`~recworld.runner.RunnerConfig`
    (:data:`EMBED_RUNNER` defaults). The flat keywords of older code and runs
    (``spec=``, ``base_url=``, ``timeout_s=``, ``instance=``, ...) are read into them.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: EmbedderRef = "minilm"
    backend: ModelConfig = Field(default_factory=ModelConfig)
    runner: RunnerConfig = EMBED_RUNNER

    @model_validator(mode="before")
    @classmethod
    def _nested(cls, data: Any) -> Any:
        """The flat form (``spec``, ``instance``, ``base_url``, ``timeout_s``, ...) read into the nested one.

        Runner settings given as a dict fill in over :data:`EMBED_RUNNER`, not the Runner's defaults.
        """
        if not isinstance(data, dict):
            return data
        data = dict(data)
        instance, spec = data.pop("instance", None), data.pop("spec", None)
        if "model" not in data and (instance is not None or spec is not None):
            data["model"] = instance if instance is not None else spec
        backend = {k: data.pop(k) for k in _EMBED_BACKEND_KEYS if k in data}
        runner = {k: data.pop(k) for k in _EMBED_RUNNER_KEYS if k in data}
        if backend:
            given = data.get("backend")
            base = given.model_dump() if isinstance(given, ModelConfig) else dict(given or {})
            data["backend"] = {**base, **backend}
        given = data.get("runner")
        if runner or isinstance(given, Mapping):
            base = given.model_dump() if isinstance(given, RunnerConfig) else dict(given or {})
            data["runner"] = {**EMBED_RUNNER.model_dump(), **base, **runner}
        return data

    @property
    def name(self) -> str:
        """The embedder's spec as runs record it (an object: ``backend:model`` of its identity).

        The same name as :attr:`SessionConfig.name` (it was ``spec`` before; ``spec=`` of
        older code and runs still reads as ``model``).
        """
        return model_name(self.model)

    @classmethod
    def of(cls, embedder: Embedder) -> EmbedderConfig:
        """The config of an embedder object (``EmbedderConfig.of(MyEmbedder())``)."""
        return cls(model=embedder)
