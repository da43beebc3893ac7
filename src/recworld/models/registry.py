"""Model spec strings (``backend:name``) and the lazy factory behind them.

The table below is the only place a backend is registered: each entry names
the module that holds it and its typed options class. The module is imported
only when the spec is used; its options are checked before that.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from recworld.console import did_you_mean, phrase
from recworld.console.options import Flag, Operational, key_values
from recworld.errors import ConfigError
from recworld.models.base import Model
from recworld.models.options import (
    BackendOptions,
    HFOptions,
    HFVisionOptions,
    ItemKNNOptions,
    LlamaCppOptions,
    NoOptions,
    OpenAIOptions,
    VLLMOptions,
    parse_options,
)


class ModelConfig(BaseModel):
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
        str | None, Field(description="OpenAI-compatible server URL."), Flag(metavar="URL"), Operational()
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
    n_ctx: Annotated[int, Field(ge=1, description="Context window of a local model, in tokens.")] = 4096
    n_threads: Annotated[
        int | None,
        Field(ge=1, description="CPU threads of a local model (default: all cores)."),
        Operational(),
    ] = None
    # Fallback sampling seed, for a request that carries none.
    seed: int = 0
    suite_dir: Path | None = None
    options: Annotated[
        dict[str, Any],
        Field(description="KEY=VALUE for the backend, checked against its options."),
        Flag(
            "--model-option", key="model_options", metavar="KEY=VALUE", parse=key_values, cli_type=list[str]
        ),
    ] = Field(default_factory=dict)


@dataclass(frozen=True)
class ModelSpec:
    backend: str
    name: str

    @classmethod
    def parse(cls, spec: str) -> ModelSpec:
        backend, sep, name = spec.partition(":")
        backend = backend.strip().lower()
        if backend not in BACKENDS:
            known = ", ".join(sorted(BACKENDS))
            raise ConfigError(f"unknown model backend in {spec!r}{_spec_hint(spec)}; known: {known}")
        if not sep and BACKENDS[backend].needs_name:
            raise ConfigError(f"model spec {spec!r} needs a name: {backend}:<model>")
        return cls(backend, name.strip())

    def __str__(self) -> str:
        return f"{self.backend}:{self.name}" if self.name else self.backend


def _spec_hint(spec: str) -> str:
    """'did you mean' for a mistyped backend (``popularty``, ``openia:x``) or a bare model name."""
    backend, sep, name = spec.strip().partition(":")
    close = did_you_mean(backend, BACKENDS, n=1)
    if close:
        return phrase([f"{close[0]}{sep}{name}"])
    if not sep:  # "gpt-4o-mini" or "org/model": a model name without its backend
        return phrase([f"{'hf' if '/' in backend else 'openai'}:{backend}"])
    return ""


class ModelFactory(Protocol):
    def __call__(self, spec: ModelSpec, config: ModelConfig) -> Model: ...


@dataclass(frozen=True)
class Backend:
    module: str  # recworld module holding a ``create(spec, config) -> Model`` function
    options: type[BackendOptions] = NoOptions  # what ``ModelConfig.options`` may hold
    needs_name: bool = True


BACKENDS: dict[str, Backend] = {
    "openai": Backend("recworld.models.openai_compat", OpenAIOptions),
    "llamacpp": Backend("recworld.models.llamacpp", LlamaCppOptions),
    "hf": Backend("recworld.models.hf", HFOptions),
    "hf-vision": Backend("recworld.models.hf_vision", HFVisionOptions),
    "vllm": Backend("recworld.models.vllm", VLLMOptions),
    "random": Backend("recworld.baselines", needs_name=False),
    "popularity": Backend("recworld.baselines", needs_name=False),
    "itemknn": Backend("recworld.baselines", ItemKNNOptions, needs_name=False),
    "oracle": Backend("recworld.baselines", needs_name=False),
    "scripted": Backend("recworld.models.scripted", needs_name=False),
}


def load_model(spec: str | ModelSpec, config: ModelConfig | None = None) -> Model:
    """Create the model a spec string names; its options are checked before anything loads."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    config = config or ModelConfig()
    entry = BACKENDS[parsed.backend]
    parse_options(entry.options, config.options, parsed.backend)
    module = importlib.import_module(entry.module)
    factory: ModelFactory = module.create
    return factory(parsed, config)


ModelLike = str | ModelSpec | Model
"""What a library call accepts wherever it needs a model: a spec string, a parsed spec, or a model object."""


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
