"""One place that opens a :class:`SessionConfig` as a cached Runner behind a StructuredLLM.

Every LUNAR step caches its calls in ``DIR/cache.sqlite``, so rerunning an
interrupted step resumes: answered requests come back from the cache. A model
given as an object (not a spec) belongs to its caller: the Runner is closed, the
model is not (:func:`recworld.models.resolve_model`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from recworld.chat import AnswerMode, Request, Response
from recworld.lunar.llm import tracking
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.llm.fresh import FreshRunner
from recworld.lunar.llm.structured import StructuredLLM
from recworld.models import Model, ModelBase, context_window, max_concurrency, resolve_model
from recworld.runner import ResponseCache, Runner

CACHE_FILE = "cache.sqlite"


class Borrowed(ModelBase):
    """A model the caller owns, lent to a Runner: everything is the model's except ``aclose``.

    Capabilities are the model's too (``max_concurrency``, ``context_window`` through
    :mod:`recworld.models`' capability functions; ``count_tokens`` and any backend method
    such as ``discover_context_window`` by attribute), so the Runner and the Full
    context's budget see what the model itself declares. :attr:`lent` is the model.
    """

    def __init__(self, model: Model) -> None:
        self.lent = model

    @property
    def identity(self) -> Mapping[str, str]:
        return self.lent.identity

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return self.lent.supports

    @property
    def max_concurrency(self) -> int | None:
        return max_concurrency(self.lent)

    @property
    def context_window(self) -> int | None:
        return context_window(self.lent)

    async def complete(self, request: Request) -> Response:
        return await self.lent.complete(request)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "lent":  # copy/pickle probes, not capabilities
            raise AttributeError(name)
        return getattr(self.lent, name)

    async def aclose(self) -> None:
        return None


@asynccontextmanager
async def open_llm(config: SessionConfig, root: Path) -> AsyncIterator[StructuredLLM]:
    """The model of ``config`` behind a runner whose cache lives in ``root``."""
    model, owned = resolve_model(config.model, config.backend)
    if (tracker := tracking.current()) is not None:  # progress lines and the cost estimate
        tracker.opened(max_concurrency(model), config.runner.concurrency)
    root.mkdir(parents=True, exist_ok=True)
    cache = ResponseCache(root / CACHE_FILE)
    runner = Runner(model if owned else Borrowed(model), config.runner, cache)
    try:
        yield StructuredLLM(
            FreshRunner(runner) if config.retry_failures else runner,
            max_attempts=config.max_attempts,
            max_tokens=config.max_tokens,
            compact=config.compact_decoding,
            retry_cached=config.retry_failures,
        )
    finally:
        await runner.aclose()
        cache.close()
