"""One place that opens a :class:`SessionConfig` as a cached Runner behind a StructuredLLM.

Every LUNAR step caches its calls in ``DIR/cache.sqlite``, so rerunning an
interrupted step resumes: answered requests come back from the cache. The runner
is opened by :func:`recworld.runner.open_runner` (the cache path confined, what
is in flight drained before anything closes). A model given as an object (not a
spec) belongs to its caller: the Runner is closed, the model is not
(:func:`recworld.models.resolve_model` says which, ``owned``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from recworld.lunar.llm import tracking
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.llm.structured import StructuredLLM
from recworld.models import max_concurrency, resolve_model
from recworld.runner import open_runner

CACHE_FILE = "cache.sqlite"


@asynccontextmanager
async def open_llm(config: SessionConfig, root: Path) -> AsyncIterator[StructuredLLM]:
    """The model of ``config`` behind a runner whose cache lives in ``root``."""
    model, owned = resolve_model(config.model, config.backend)
    if (tracker := tracking.current()) is not None:  # progress lines and the cost estimate
        tracker.opened(max_concurrency(model), config.runner.concurrency)
    async with open_runner(model, config.runner, root / CACHE_FILE, owned=owned) as runner:
        yield StructuredLLM(
            runner,
            max_attempts=config.max_attempts,
            max_tokens=config.max_tokens,
            compact=config.compact_decoding,
            retry_cached=config.retry_failures,
        )
