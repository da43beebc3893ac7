"""Model spec strings (``backend:name``) and the lazy factory behind them.

The table below is the only place a backend is registered: each entry names
the module that holds it and the extra that installs its heavy library. The
module is imported only when the spec is used.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from recworld.errors import ConfigError
from recworld.models.base import Model


class ModelConfig(BaseModel):
    """Options shared by all backends; each backend reads the ones it understands."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    n_ctx: int = 4096
    n_threads: int | None = None
    seed: int = 0
    # Where classic baselines find the training interactions (a suite directory).
    suite_dir: Path | None = None
    extra: dict[str, Any] = {}


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
            raise ConfigError(f"unknown model backend in {spec!r}; known: {known}")
        if not sep and BACKENDS[backend].needs_name:
            raise ConfigError(f"model spec {spec!r} needs a name: {backend}:<model>")
        return cls(backend, name.strip())

    def __str__(self) -> str:
        return f"{self.backend}:{self.name}" if self.name else self.backend


class ModelFactory(Protocol):
    def __call__(self, spec: ModelSpec, config: ModelConfig) -> Model: ...


@dataclass(frozen=True)
class Backend:
    module: str  # recworld module holding a ``create(spec, config) -> Model`` function
    needs_name: bool = True


BACKENDS: dict[str, Backend] = {
    "openai": Backend("recworld.models.openai_compat"),
    "llamacpp": Backend("recworld.models.llamacpp"),
    "hf": Backend("recworld.models.hf"),
    "hf-vision": Backend("recworld.models.hf_vision"),
    "vllm": Backend("recworld.models.vllm"),
    "random": Backend("recworld.models.baselines", needs_name=False),
    "popularity": Backend("recworld.models.baselines", needs_name=False),
    "itemknn": Backend("recworld.models.baselines", needs_name=False),
    "scripted": Backend("recworld.models.scripted", needs_name=False),
}


def load_model(spec: str | ModelSpec, config: ModelConfig | None = None) -> Model:
    """Create the model a spec string names."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    module = importlib.import_module(BACKENDS[parsed.backend].module)
    factory: ModelFactory = module.create
    return factory(parsed, config or ModelConfig())
