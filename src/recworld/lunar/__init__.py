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

Every name here loads its module on first use (module ``__getattr__``, the lazy-attribute
pattern of Scientific Python's SPEC 1), so a command module that imports one submodule
does not pay for the rest at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recworld.lazy import attach

if TYPE_CHECKING:
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

# Public names that load their module (and its heavy imports) when first asked for.
_ON_FIRST_USE = {
    "ablate": "recworld.lunar.api",
    "evaluate_contexts": "recworld.lunar.api",
    "make_queries": "recworld.lunar.api",
    "rate_quality": "recworld.lunar.api",
    "synthesize": "recworld.lunar.api",
    "write_lunar_report": "recworld.lunar.api",
    "AblateConfig": "recworld.lunar.config",
    "LunarEvalConfig": "recworld.lunar.config",
    "QueriesConfig": "recworld.lunar.config",
    "RateConfig": "recworld.lunar.config",
    "ReportConfig": "recworld.lunar.config",
    "SynthConfig": "recworld.lunar.config",
    "SynthOptions": "recworld.lunar.config",
    "ContextSetting": "recworld.lunar.contexts",
    "register_context": "recworld.lunar.contexts",
    "EmbedderConfig": "recworld.lunar.llm.config",
    "SessionConfig": "recworld.lunar.llm.config",
    "CATEGORIES": "recworld.lunar.schemas",
    "BehaviourRecord": "recworld.lunar.schemas",
    "BehaviourType": "recworld.lunar.schemas",
    "Category": "recworld.lunar.schemas",
    "Demographic": "recworld.lunar.schemas",
    "Profile": "recworld.lunar.schemas",
    "Query": "recworld.lunar.schemas",
    "Rubric": "recworld.lunar.schemas",
    "Trajectory": "recworld.lunar.schemas",
}


__getattr__, __dir__ = attach(__name__, _ON_FIRST_USE)


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
