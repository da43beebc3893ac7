"""LRWorld: recommendation-knowledge questions built from real interaction logs."""

from recworld.lrworld.catalogue import (
    MEASURES,
    MEASURES_BY_ID,
    Factor,
    Measure,
    OptionKind,
    Scale,
    get_measure,
)
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.prompts import VARIANTS, RenderedPrompt, render_prompt
from recworld.lrworld.schema import QUESTION_SCHEMA, Entry, Question, QuestionFormat, Target
from recworld.lrworld.suite import MANIFEST_SCHEMA, build_suite

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
    "Question",
    "QuestionFormat",
    "RenderedPrompt",
    "Scale",
    "Target",
    "build_suite",
    "get_measure",
    "render_prompt",
]
