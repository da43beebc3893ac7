"""What a backend declares about itself before anything of it is imported: the :class:`Backend` row.

A row names where the backend's factory lives (a module path, or the factory
itself for a plugin), the typed options class ``ModelConfig.options`` is
checked against, and the facts callers need *before* a model is loaded, so
that nobody outside :mod:`recworld.models` tests a backend's name:

* ``needs_gpu``: a Ray replica asks for a GPU (``vllm``);
* ``sends_requests``: False for backends that answer in-process from data
  (the classic baselines); ``recworld eval`` then shows no request counters;
* ``compact_decoding``: structured output should use short strings and
  fixed-length arrays (small local llama.cpp models loop under greedy
  decoding of a full JSON schema);
* ``ceiling``: it answers from the ground truth itself (the ``oracle``), so a
  report shows its runs as an upper bound, never as a competitor;
* ``name_form``: what follows ``backend:`` in a spec (``NAME``, ``ORG/NAME``; empty
  for one that takes no name, ``minilm``), for the generated spec help
  (:func:`~recworld.models.registry.spec_forms`);
* ``kind``: ``"chat"`` (a :class:`~recworld.models.base.Model`) or
  ``"embedding"`` (an :class:`~recworld.models.embedding.Embedder`).

What a backend knows only once loaded (its identity, answer modes, context
window, tokenizer, concurrency) lives on the model object
(:class:`~recworld.models.base.ModelBase`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from recworld.models.options import BackendOptions, NoOptions

ModelKind = Literal["chat", "embedding"]


@dataclass(frozen=True)
class Backend:
    """One backend: its factory, options class and load-free capabilities.

    ``module`` is ``"package.module"`` (its ``create`` function is the factory)
    or ``"package.module:function"``; it is imported only when a spec names the
    backend. A plugin may give ``factory`` instead. The factory is called as
    ``factory(spec: ModelSpec, config: ModelConfig)`` and returns the model.
    """

    module: str = ""
    options: type[BackendOptions] = NoOptions
    needs_name: bool = True
    kind: ModelKind = "chat"
    needs_gpu: bool = False
    sends_requests: bool = True
    compact_decoding: bool = False
    ceiling: bool = False
    name_form: str = "NAME"
    factory: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        if not self.module and self.factory is None:
            raise ValueError("a Backend needs a module or a factory")

    def load_factory(self) -> Callable[..., Any]:
        """The factory, importing its module on first use."""
        if self.factory is not None:
            return self.factory
        module, _, name = self.module.partition(":")
        found: Callable[..., Any] = getattr(importlib.import_module(module), name or "create")
        return found

    @property
    def origin(self) -> str:
        """Where the factory lives, for messages: the module path or the factory's qualified name."""
        if self.module:
            return self.module
        factory = self.factory
        return f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', '?')}"
