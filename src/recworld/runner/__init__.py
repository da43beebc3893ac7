"""The engine every LLM call goes through: response cache, coalescing, concurrency, retries, deadlines.

It knows nothing of suites, questions or scores: LRWorld evaluation lives in
:mod:`recworld.evaluation`, above this package.
"""

from recworld.runner.cache import ResponseCache, cache_key
from recworld.runner.engine import Completion, Runner, RunnerConfig, RunnerStats

__all__ = [
    "Completion",
    "ResponseCache",
    "Runner",
    "RunnerConfig",
    "RunnerStats",
    "cache_key",
]
