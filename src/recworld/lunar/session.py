"""One place that turns a model spec into a cached Runner wrapped in a StructuredLLM.

Every LUNAR step caches its calls in ``DIR/cache.sqlite``, so rerunning an
interrupted step resumes: answered requests come back from the cache.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from recworld.lunar.llm import StructuredLLM
from recworld.models import ModelConfig, load_model
from recworld.runner import ResponseCache, Runner, RunnerConfig


class SessionConfig:
    """Backend options shared by the lunar commands."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        n_ctx: int = 4096,
        concurrency: int = 4,
        max_attempts: int = 3,
        max_tokens: int = 512,
        seed: int = 0,
        timeout_s: float = 900.0,
        compact: bool | None = None,
    ) -> None:
        self.base_url = base_url
        self.n_ctx = n_ctx
        self.concurrency = concurrency
        self.max_attempts = max_attempts
        self.max_tokens = max_tokens
        self.seed = seed
        # Local CPU models under load can need minutes per structured call; a runner timeout
        # shorter than that retries forever behind the busy model, so the default is generous.
        self.timeout_s = timeout_s
        # None: compact decoding (short strings, fixed-length arrays) for local llama.cpp models,
        # which loop under greedy decoding of a full schema; full schemas for servers.
        self.compact = compact

    def compact_for(self, spec: str) -> bool:
        return self.compact if self.compact is not None else spec.startswith("llamacpp:")


@asynccontextmanager
async def open_llm(
    spec: str, root: Path, config: SessionConfig | None = None
) -> AsyncIterator[StructuredLLM]:
    cfg = config or SessionConfig()
    model = load_model(spec, ModelConfig(base_url=cfg.base_url, n_ctx=cfg.n_ctx, seed=cfg.seed))
    root.mkdir(parents=True, exist_ok=True)
    cache = ResponseCache(root / "cache.sqlite")
    runner = Runner(
        model,
        RunnerConfig(concurrency=cfg.concurrency, progress=False, seed=cfg.seed, timeout_s=cfg.timeout_s),
        cache,
    )
    try:
        yield StructuredLLM(
            runner, max_attempts=cfg.max_attempts, max_tokens=cfg.max_tokens, compact=cfg.compact_for(spec)
        )
    finally:
        await runner.aclose()
        cache.close()
