"""Model spec strings (``backend:name``) and the lazy factory behind them.

Built-in backends are registered in the two tables below, one row each
(:class:`~recworld.models.backend.Backend`: the module that holds it, its typed
options class and its load-free capabilities): :data:`BACKENDS` for chat
models, :data:`EMBEDDERS` for text embedders. Third-party backends register
through the ``recworld.models`` entry-point group (:mod:`recworld.models.plugins`)
and are found by the same lookups. A backend's module is imported only when a
spec names it; its options are checked before that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol

from pydantic import AfterValidator, ConfigDict, Field, field_validator

from recworld.console import did_you_mean, phrase
from recworld.console.options import Flag, Operational, key_values
from recworld.errors import ConfigError
from recworld.models._urls import refuse_credentials
from recworld.models.backend import Backend, ModelKind
from recworld.models.base import Model
from recworld.models.embedding import Embedder
from recworld.models.options import (
    HFOptions,
    HFVisionOptions,
    ItemKNNOptions,
    LlamaCppOptions,
    OpenAIEmbedOptions,
    OpenAIOptions,
    ScriptedOptions,
    SentenceTransformerOptions,
    VLLMOptions,
    parse_options,
)
from recworld.models.plugins import load_plugin
from recworld.models.plugins import plugin_names as plugins_of
from recworld.records import MAX_TOKENS, Seed, Settings

# A URL a model or service is reached at: never one holding credentials (recworld.models._urls).
ServerURL = Annotated[str, AfterValidator(refuse_credentials)]


class ModelConfig(Settings):
    """Settings every backend shares, plus ``options`` that only its own backend reads.

    ``options`` is validated against the backend's typed class
    (:mod:`recworld.models.options`) when the model is created, so an unknown or
    ill-typed option is a :class:`ConfigError` naming it and the backend.

    ``suite_dir`` is for the classic baselines only (``random``, ``popularity``,
    ``itemknn``): they train on the suite's ``dataset/`` folder. LLM backends
    ignore it.

    The API key is never stored here: ``api_key_env`` names the environment
    variable it is read from when the model is created, and the key is sent
    only to ``base_url``. Over plain ``http://`` it is sent to a loopback host
    only, unless ``allow_insecure_http`` is set.
    """

    model_config = ConfigDict(extra="forbid")

    # Each setting's help and flag are declared here once (recworld.console.options);
    # Operational: it never changes an answer, so it is not part of a run's identity.
    # Where the model is asked, not what it is (the spec names the model): a server moved to
    # another port still serves the same run.
    base_url: Annotated[
        ServerURL | None,
        Field(description="OpenAI-compatible server URL (the key comes from --api-key-env, never the URL)."),
        Flag(metavar="URL"),
        Operational(),
    ] = None
    api_key_env: Annotated[
        str,
        Field(description="Name of the env var holding the API key."),
        Flag(metavar="NAME"),
        Operational(),
    ] = "OPENAI_API_KEY"
    allow_insecure_http: Annotated[
        bool, Field(description="Send the key over plain http:// to a non-loopback host."), Operational()
    ] = False
    n_ctx: Annotated[
        int, Field(ge=1, le=MAX_TOKENS, description="Context window of a local model, in tokens.")
    ] = 4096
    n_threads: Annotated[
        int | None,
        Field(ge=1, le=4096, description="CPU threads of a local model (default: all cores)."),
        Operational(),
    ] = None
    # Fallback sampling seed, for a request that carries none.
    seed: Seed = 0
    suite_dir: Path | None = None
    options: Annotated[
        dict[str, Any],
        Field(description="KEY=VALUE for the backend, checked against its options."),
        Flag(
            "--model-option", key="model_options", metavar="KEY=VALUE", parse=key_values, cli_type=list[str]
        ),
    ] = Field(default_factory=dict)

    @field_validator("options")
    @classmethod
    def _finite(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Options are stored in ``run.json``: a TOML ``inf`` or ``nan`` in one is refused here, by name."""
        for name, option in value.items():
            if not _finite_json(option):
                raise ValueError(f"option {name!r} holds a number that is not finite (inf or nan)")
        return value


def _finite_json(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_json(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite_json(v) for v in value)
    return True


@dataclass(frozen=True)
class ModelSpec:
    backend: str
    name: str

    @classmethod
    def parse(cls, spec: str, kind: ModelKind = "chat") -> ModelSpec:
        """``backend:name`` checked against the backends of ``kind`` (built-in and plugins)."""
        backend, sep, name = spec.partition(":")
        backend = backend.strip().lower()
        entry = find_backend(backend, kind, spec=spec)
        if not sep and entry.needs_name:
            raise ConfigError(f"model spec {spec!r} needs a name: {backend}:<model>")
        return cls(backend, name.strip())

    def __str__(self) -> str:
        return f"{self.backend}:{self.name}" if self.name else self.backend


class ModelFactory(Protocol):
    def __call__(self, spec: ModelSpec, config: ModelConfig) -> Model: ...


# The llamacpp backend's built-in short names (recworld.models.llamacpp.KNOWN_MODELS, which a test
# keeps equal), here so that a hint for a bare "smollm2-135m" imports nothing.
LLAMACPP_NAMES = ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b")

# The built-in chat backends. Third-party ones come from the ``recworld.models`` entry-point group.
BACKENDS: dict[str, Backend] = {
    "openai": Backend("recworld.models.openai_compat", OpenAIOptions),
    "llamacpp": Backend("recworld.models.llamacpp", LlamaCppOptions, compact_decoding=True),
    "hf": Backend("recworld.models.hf", HFOptions, name_form="ORG/NAME"),
    "hf-vision": Backend("recworld.models.hf_vision", HFVisionOptions, name_form="ORG/NAME"),
    "vllm": Backend("recworld.models.vllm", VLLMOptions, needs_gpu=True),
    "random": Backend("recworld.baselines", needs_name=False, sends_requests=False),
    "popularity": Backend("recworld.baselines", needs_name=False, sends_requests=False),
    "itemknn": Backend("recworld.baselines", ItemKNNOptions, needs_name=False, sends_requests=False),
    "oracle": Backend("recworld.baselines", needs_name=False, sends_requests=False, ceiling=True),
    # The test double stands in for an LLM: its counters are shown like one.
    "scripted": Backend("recworld.models.scripted", ScriptedOptions, needs_name=False, name_form="FILE.json"),
}

# The built-in embedders, named by the same spec syntax (``minilm``, ``st:NAME``, ``openai:MODEL``).
EMBEDDERS: dict[str, Backend] = {
    "minilm": Backend(
        "recworld.models.st_embed",
        SentenceTransformerOptions,
        needs_name=False,
        name_form="",
        kind="embedding",
    ),
    "st": Backend("recworld.models.st_embed", SentenceTransformerOptions, kind="embedding"),
    "openai": Backend(
        "recworld.models.openai_embed", OpenAIEmbedOptions, name_form="MODEL", kind="embedding"
    ),
    "scripted": Backend(
        "recworld.models.scripted:create_embedder", needs_name=False, sends_requests=False, kind="embedding"
    ),
}

_BUILTIN: dict[ModelKind, dict[str, Backend]] = {"chat": BACKENDS, "embedding": EMBEDDERS}
_NOUN: dict[ModelKind, str] = {"chat": "model backend", "embedding": "embedder backend"}
_A: dict[ModelKind, str] = {"chat": "a chat model backend", "embedding": "an embedder backend"}


def find_backend(name: str, kind: ModelKind = "chat", *, spec: str | None = None) -> Backend:
    """The backend ``name`` of ``kind``: a built-in row, else an installed plugin; else a ConfigError."""
    table = _BUILTIN[kind]
    entry = table.get(name)
    if entry is not None:
        return entry
    shown = spec if spec is not None else name
    builtin = frozenset(BACKENDS) | frozenset(EMBEDDERS)
    plugins = plugins_of(builtin)
    if name in plugins:
        entry = load_plugin(name)
        if entry.kind != kind:
            raise ConfigError(f"{shown!r}: the plugin {name!r} is {_A[entry.kind]}, not {_A[kind]}")
        return entry
    known = ", ".join(sorted(table))
    listed = f"; plugins: {', '.join(plugins)}" if plugins else ""
    raise ConfigError(
        f"unknown {_NOUN[kind]} in {shown!r}{_spec_hint(shown, [*table, *plugins])}; known: {known}{listed}"
    )


def backend_of(spec: str | ModelSpec, kind: ModelKind = "chat") -> Backend:
    """The :class:`Backend` row a spec names: its options class and load-free capabilities."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec, kind)
    return find_backend(parsed.backend, kind)


def spec_forms(kind: ModelKind = "chat", *, baselines: bool = True) -> str:
    """The spec forms of the built-in backends of ``kind``, for a spec help: generated from the rows.

    A backend that sends requests shows as ``backend:NAME`` (its ``name_form``;
    ``backend[:FORM]`` when the name is optional, ``backend`` alone when its
    ``name_form`` is empty: it takes no name); with ``baselines``, the chat
    backends that answer in-process follow by name (the in-process embedder is
    the test double, never listed). Plugins are left out: listing them would
    scan the entry points whenever a command's help is built.
    """
    table = _BUILTIN[kind]
    models = [_form(name, row) for name, row in table.items() if row.sends_requests]
    inline = [name for name, row in table.items() if not row.sends_requests]
    if baselines and kind == "chat" and inline:
        return f"{', '.join(models)}, or a baseline: {', '.join(inline)}"
    return f"{', '.join(models[:-1])} or {models[-1]}"


def _form(name: str, row: Backend) -> str:
    if not row.name_form:
        return name
    return f"{name}:{row.name_form}" if row.needs_name else f"{name}[:{row.name_form}]"


def _spec_hint(spec: str, names: list[str]) -> str:
    """'did you mean' for a mistyped backend (``popularty``, ``openia:x``) or a bare model name."""
    backend, sep, name = spec.strip().partition(":")
    close = did_you_mean(backend, names, n=1)
    if close:
        return phrase([f"{close[0]}{sep}{name}"])
    if not sep and "llamacpp" in names:  # a built-in local model's short name: "smollm2-135m"
        local = [backend] if backend in LLAMACPP_NAMES else did_you_mean(backend, LLAMACPP_NAMES, n=1)
        if local:
            return phrase([f"llamacpp:{local[0]}"])
    if not sep and "openai" in names:  # "gpt-4o-mini" or "org/model": a model name without its backend
        return phrase([f"{'hf' if '/' in backend else 'openai'}:{backend}"])
    return ""


def load_model(spec: str | ModelSpec, config: ModelConfig | None = None) -> Model:
    """Create the model a spec string names; its options are checked before anything loads."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    config = config or ModelConfig()
    entry = find_backend(parsed.backend)
    parse_options(entry.options, config.options, parsed.backend)
    factory: ModelFactory = entry.load_factory()
    return factory(parsed, config)


def load_embedder(spec: str | ModelSpec, config: ModelConfig | None = None) -> Embedder:
    """Create the embedder a spec names (``minilm``, ``st:NAME``, ``openai:MODEL``, a plugin)."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec, "embedding")
    config = config or ModelConfig()
    entry = find_backend(parsed.backend, "embedding")
    parse_options(entry.options, config.options, parsed.backend)
    embedder = entry.load_factory()(parsed, config)
    if not isinstance(embedder, Embedder):
        raise ConfigError(
            f"the embedder backend {parsed.backend!r} made a {type(embedder).__name__}, not an Embedder"
        )
    return embedder


ModelLike = str | ModelSpec | Model
"""What a library call accepts wherever it needs a model: a spec string, a parsed spec, or a model object."""


def object_name(obj: Model | Embedder) -> str:
    """The one name a model or embedder object goes by in both suites' run records and folders.

    ``backend:model`` of its identity; else the identity's values joined by ``:``
    (``{"model": "tallrec", "checkpoint": "lora-7"}`` is ``tallrec:lora-7``, so two
    checkpoints are two names); else its class name.
    """
    identity = obj.identity
    if identity.get("backend") and identity.get("model"):
        return f"{identity['backend']}:{identity['model']}"
    return ":".join(str(v) for v in identity.values() if v) or type(obj).__name__


def resolve_model(model: ModelLike, config: ModelConfig | None = None) -> tuple[Model, bool]:
    """The model a library call should ask, and whether the call owns it (and must close it).

    A spec is loaded with :func:`load_model` and is owned by the caller of this
    function. An object that satisfies :class:`Model` is used as it is: it belongs
    to whoever made it, so RecWorld never closes it, and ``config`` is not applied
    to it.
    """
    if isinstance(model, str | ModelSpec):
        return load_model(model, config), True
    if not isinstance(model, Model):
        raise ConfigError(
            f"model: expected a spec string or an object with identity, supports, complete and aclose; "
            f"got {type(model).__name__}"
        )
    return model, False


EmbedderLike = str | ModelSpec | Embedder
"""What a library call accepts wherever it needs an embedder: a spec string, a parsed spec, or an object."""


def resolve_embedder(embedder: EmbedderLike, config: ModelConfig | None = None) -> tuple[Embedder, bool]:
    """:func:`resolve_model` for embedders: the embedder to use and whether the caller owns it."""
    if isinstance(embedder, str | ModelSpec):
        return load_embedder(embedder, config), True
    if not isinstance(embedder, Embedder):
        raise ConfigError(
            f"embedder: expected a spec string or an object with identity, embed and aclose; "
            f"got {type(embedder).__name__}"
        )
    return embedder, False
