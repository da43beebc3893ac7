"""The engine every model call goes through: response cache, coalescing, concurrency, retries, deadlines.

Chat requests go through a :class:`Runner`, texts to embed through an
:class:`EmbeddingRunner`; both share the cache (:class:`ResponseCache`, one key
recipe), the per-request failure policy (:mod:`recworld.runner.sending`) and
the run-level one (:func:`judge`). Every runner is opened by
:func:`open_runner` or its embedding twins (:mod:`recworld.runner.opening`: cache
confined, who closes the model, closing order). It knows nothing of suites,
questions or scores: LRWorld evaluation lives in :mod:`recworld.evaluation`,
above this package.
"""

from recworld.runner.cache import ResponseCache, cache_key
from recworld.runner.config import RunnerConfig, RunnerStats
from recworld.runner.embeddings import BlockingEmbedder, EmbeddingRunner
from recworld.runner.engine import Completion, Runner
from recworld.runner.opening import (
    answer_all,
    open_blocking_embedder,
    open_embedding_runner,
    open_runner,
)
from recworld.runner.policy import DEFAULT_FAIL_ON_ERROR, FailOnError, Failure, judge

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
