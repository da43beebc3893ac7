"""One place that turns a :class:`SessionConfig` into a cached Runner wrapped in a StructuredLLM.

Every LUNAR step caches its calls in ``DIR/cache.sqlite``, so rerunning an
interrupted step resumes: answered requests come back from the cache.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from pydantic import ValidationError

from recworld.errors import ConfigError
from recworld.lunar.config import SessionConfig
from recworld.lunar.fresh import FreshRunner
from recworld.lunar.llm import StructuredLLM
from recworld.models import ModelConfig, load_model
from recworld.runner import ResponseCache, Runner


def _backend(config: SessionConfig) -> ModelConfig:
    try:
        return config.backend_config()
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"model {config.model!r}: option {field}: {first['msg']}") from None


@asynccontextmanager
async def open_llm(config: SessionConfig, root: Path) -> AsyncIterator[StructuredLLM]:
    """The model of ``config`` behind a runner whose cache lives in ``root``."""
    model = load_model(config.model, _backend(config))
    root.mkdir(parents=True, exist_ok=True)
    cache = ResponseCache(root / "cache.sqlite")
    runner = Runner(model, config.runner_config(), cache)
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
