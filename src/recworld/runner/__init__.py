"""Send requests to models: response cache, concurrency, retries, resumable evaluation runs."""

from recworld.runner.cache import ResponseCache, cache_key
from recworld.runner.engine import Completion, Runner, RunnerConfig, RunnerStats
from recworld.runner.evaluate import EvalConfig, evaluate, evaluate_async

__all__ = [
    "Completion",
    "EvalConfig",
    "ResponseCache",
    "Runner",
    "RunnerConfig",
    "RunnerStats",
    "cache_key",
    "evaluate",
    "evaluate_async",
]
