"""LRWorld: recommendation-knowledge questions built from real interaction logs.

The face has two halves. The measure catalogue and the question record are
pure data and load at once: scoring and the report read them for every run.
Building a suite and rendering prompts need the data loaders, pandas, scipy
and the miners, so those names load on first use (module ``__getattr__``, the
lazy-attribute pattern of Scientific Python's SPEC 1), and ``import
recworld.scoring`` stays free of them (``tests/lrworld/test_catalogue.py``).
The submodules import each other at module level; nothing here hides a cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recworld.lazy import attach
from recworld.lrworld.catalogue import (
    MEASURES,
    MEASURES_BY_ID,
    Factor,
    Measure,
    OptionKind,
    Scale,
    get_measure,
)
from recworld.lrworld.schema import QUESTION_SCHEMA, Entry, PublicQuestion, Question, QuestionFormat, Target

if TYPE_CHECKING:
    from recworld.lrworld.config import BuildConfig
    from recworld.lrworld.manifest import MANIFEST_SCHEMA, SuiteManifest
    from recworld.lrworld.prompts import VARIANTS, RenderedPrompt, render_prompt
    from recworld.lrworld.suite import build_suite

# Public names that load their module (and its heavy imports) when first asked for.
_ON_FIRST_USE = {
    "BuildConfig": "recworld.lrworld.config",
    "MANIFEST_SCHEMA": "recworld.lrworld.manifest",
    "SuiteManifest": "recworld.lrworld.manifest",
    "VARIANTS": "recworld.lrworld.prompts",
    "RenderedPrompt": "recworld.lrworld.prompts",
    "render_prompt": "recworld.lrworld.prompts",
    "build_suite": "recworld.lrworld.suite",
}


__getattr__, __dir__ = attach(__name__, _ON_FIRST_USE)


__all__ = [
    "MANIFEST_SCHEMA",
    "MEASURES",
    "MEASURES_BY_ID",
    "QUESTION_SCHEMA",
    "VARIANTS",
    "BuildConfig",
    "Entry",
    "Factor",
    "Measure",
    "OptionKind",
    "PublicQuestion",
    "Question",
    "QuestionFormat",
    "RenderedPrompt",
    "Scale",
    "SuiteManifest",
    "Target",
    "build_suite",
    "get_measure",
    "render_prompt",
]
