"""LUNAR: anchored behaviour-log synthesis, queries and rubrics, context settings, judges, quality.

The library API is one function per stage, each taking one typed config
(:mod:`recworld.lunar.api`): ``synthesize``, ``make_queries``, ``evaluate`` and
``write_report``. Use them namespaced (``lunar.evaluate``), not imported bare, so
they never read as LRWorld's evaluation. See ``docs/lunar.md``. Heavy libraries
(llama.cpp, sentence-transformers) load only when used.
"""

from recworld.lunar.api import evaluate, make_queries, synthesize, write_report
from recworld.lunar.config import (
    EmbedderConfig,
    LunarEvalConfig,
    QueriesConfig,
    ReportConfig,
    SessionConfig,
    SynthConfig,
    SynthOptions,
)
from recworld.lunar.contexts import ContextSetting
from recworld.lunar.schemas import (
    CATEGORIES,
    BehaviourRecord,
    BehaviourType,
    Category,
    Demographic,
    Profile,
    Query,
    Rubric,
    Trajectory,
)

__all__ = [
    "CATEGORIES",
    "BehaviourRecord",
    "BehaviourType",
    "Category",
    "ContextSetting",
    "Demographic",
    "EmbedderConfig",
    "LunarEvalConfig",
    "Profile",
    "QueriesConfig",
    "Query",
    "ReportConfig",
    "Rubric",
    "SessionConfig",
    "SynthConfig",
    "SynthOptions",
    "Trajectory",
    "evaluate",
    "make_queries",
    "synthesize",
    "write_report",
]
