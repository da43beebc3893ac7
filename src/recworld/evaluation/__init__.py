"""LRWorld evaluation: suite + model + variant -> runner -> typed samples -> metrics.

This package sits above the engine (:mod:`recworld.runner`), scoring and
:mod:`recworld.lrworld`; none of them imports it. ``recworld eval`` is its CLI,
:func:`evaluate` (also ``recworld.evaluate``) its library call.
"""

from recworld.evaluation.api import evaluate, evaluate_async
from recworld.evaluation.config import EvalConfig, default_run_dir
from recworld.evaluation.questions import load_questions
from recworld.evaluation.records import RUN_SCHEMA, EvalResult, RunCounts, RunHeader, read_run_header
from recworld.evaluation.run import (
    CACHE_NAME,
    JOURNAL_NAME,
    RunFailedError,
    evaluate_config,
    evaluate_config_async,
)
from recworld.evaluation.samples import build_request, build_sample, parse_answer
from recworld.evaluation.settings import EvalSettings

__all__ = [
    "CACHE_NAME",
    "JOURNAL_NAME",
    "RUN_SCHEMA",
    "EvalConfig",
    "EvalResult",
    "EvalSettings",
    "RunCounts",
    "RunFailedError",
    "RunHeader",
    "build_request",
    "build_sample",
    "default_run_dir",
    "evaluate",
    "evaluate_async",
    "evaluate_config",
    "evaluate_config_async",
    "load_questions",
    "parse_answer",
    "read_run_header",
]
