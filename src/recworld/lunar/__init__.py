"""LUNAR: anchored behaviour-log synthesis, queries and rubrics, context settings, judges, quality.

The library API is one function per stage, each taking one typed config
(:mod:`recworld.lunar.api`): ``synthesize``, ``make_queries``, ``evaluate_contexts``,
``ablate``, ``rate_quality`` and ``write_lunar_report``. Their names say what they do in
LUNAR, so none reads as LRWorld's ``recworld.evaluation.evaluate`` or
``recworld.report.write_report``. A model is a spec string or any
:class:`~recworld.models.Model` object (``SessionConfig(model=...)``). Context settings
are registered classes (:mod:`recworld.lunar.contexts`). See ``docs/lunar.md``. Heavy
libraries (llama.cpp, sentence-transformers, qdrant) load only when used.

Sub-packages, lowest first: ``llm`` (asking models), ``anchors``, ``store`` (the run
folder), ``contexts``, ``judges``, ``synth``, ``queries``, ``answering``, ``quality``,
``report``, ``cli``.
"""

from recworld.lunar.api import (
    ablate,
    evaluate_contexts,
    make_queries,
    rate_quality,
    synthesize,
    write_lunar_report,
)
from recworld.lunar.config import (
    AblateConfig,
    LunarEvalConfig,
    QueriesConfig,
    RateConfig,
    ReportConfig,
    SynthConfig,
    SynthOptions,
)
from recworld.lunar.contexts import ContextSetting, register_context
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
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
    "AblateConfig",
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
    "RateConfig",
    "ReportConfig",
    "Rubric",
    "SessionConfig",
    "SynthConfig",
    "SynthOptions",
    "Trajectory",
    "ablate",
    "evaluate_contexts",
    "make_queries",
    "rate_quality",
    "register_context",
    "synthesize",
    "write_lunar_report",
]
