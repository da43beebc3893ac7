"""The engine every model call goes through: response cache, coalescing, concurrency, retries, deadlines.

Chat requests go through a :class:`Runner`, texts to embed through an
:class:`EmbeddingRunner`; both share the cache (:class:`ResponseCache`, one key
recipe), the per-request failure policy (:mod:`recworld.runner.sending`) and
the run-level one (:func:`judge`). Every runner is opened by
:func:`open_runner` or its embedding twins (:mod:`recworld.runner.opening`: cache
confined, who closes the model, closing order). It knows nothing of suites,
questions or scores: LRWorld evaluation lives in :mod:`recworld.evaluation`,
above this package.

Every name here loads its module on first use (module ``__getattr__``, the lazy-attribute
pattern of Scientific Python's SPEC 1): a config that holds a :class:`RunnerConfig`
(every command's options) loads neither asyncio, the cache nor numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recworld.lazy import attach

if TYPE_CHECKING:
    from recworld.runner.cache import ResponseCache, cache_key
    from recworld.runner.config import RunnerConfig, RunnerStats
    from recworld.runner.embeddings import BlockingEmbedder, EmbeddingRunner
    from recworld.runner.engine import Completion, Runner
    from recworld.runner.opening import answer_all, open_blocking_embedder, open_embedding_runner, open_runner
    from recworld.runner.policy import DEFAULT_FAIL_ON_ERROR, FailOnError, Failure, judge

# Public names that load their module (and its heavy imports) when first asked for.
_ON_FIRST_USE = {
    "ResponseCache": "recworld.runner.cache",
    "cache_key": "recworld.runner.cache",
    "RunnerConfig": "recworld.runner.config",
    "RunnerStats": "recworld.runner.config",
    "BlockingEmbedder": "recworld.runner.embeddings",
    "EmbeddingRunner": "recworld.runner.embeddings",
    "Completion": "recworld.runner.engine",
    "Runner": "recworld.runner.engine",
    "answer_all": "recworld.runner.opening",
    "open_blocking_embedder": "recworld.runner.opening",
    "open_embedding_runner": "recworld.runner.opening",
    "open_runner": "recworld.runner.opening",
    "DEFAULT_FAIL_ON_ERROR": "recworld.runner.policy",
    "FailOnError": "recworld.runner.policy",
    "Failure": "recworld.runner.policy",
    "judge": "recworld.runner.policy",
}


__getattr__, __dir__ = attach(__name__, _ON_FIRST_USE)


__all__ = [
    "DEFAULT_FAIL_ON_ERROR",
    "BlockingEmbedder",
    "Completion",
    "EmbeddingRunner",
    "FailOnError",
    "Failure",
    "ResponseCache",
    "Runner",
    "RunnerConfig",
    "RunnerStats",
    "answer_all",
    "cache_key",
    "judge",
    "open_blocking_embedder",
    "open_embedding_runner",
    "open_runner",
]
