"""LRWorld evaluation: suite + model + variant -> runner -> typed samples -> metrics.

This package sits above the engine (:mod:`recworld.runner`), scoring and
:mod:`recworld.lrworld`; none of them imports it. ``recworld eval`` is its CLI,
:func:`evaluate` (also ``recworld.evaluate``) its library call.

Every name here loads its module on first use (module ``__getattr__``, the lazy-attribute
pattern of Scientific Python's SPEC 1), so a command module that imports one submodule
does not pay for the rest at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recworld.lazy import attach

if TYPE_CHECKING:
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

# Public names that load their module (and its heavy imports) when first asked for.
_ON_FIRST_USE = {
    "evaluate": "recworld.evaluation.api",
    "evaluate_async": "recworld.evaluation.api",
    "EvalConfig": "recworld.evaluation.config",
    "default_run_dir": "recworld.evaluation.config",
    "load_questions": "recworld.evaluation.questions",
    "RUN_SCHEMA": "recworld.evaluation.records",
    "EvalResult": "recworld.evaluation.records",
    "RunCounts": "recworld.evaluation.records",
    "RunHeader": "recworld.evaluation.records",
    "read_run_header": "recworld.evaluation.records",
    "CACHE_NAME": "recworld.evaluation.run",
    "JOURNAL_NAME": "recworld.evaluation.run",
    "RunFailedError": "recworld.evaluation.run",
    "evaluate_config": "recworld.evaluation.run",
    "evaluate_config_async": "recworld.evaluation.run",
    "build_request": "recworld.evaluation.samples",
    "build_sample": "recworld.evaluation.samples",
    "parse_answer": "recworld.evaluation.samples",
    "EvalSettings": "recworld.evaluation.settings",
}


__getattr__, __dir__ = attach(__name__, _ON_FIRST_USE)


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
