"""LRWorld: recommendation-knowledge questions built from real interaction logs."""

from recworld.lrworld.catalogue import MEASURES, MEASURES_BY_ID, Factor, Measure, Scale, get_measure
from recworld.lrworld.schema import QUESTION_SCHEMA, Entry, Question, QuestionFormat, Target

__all__ = [
    "MEASURES",
    "MEASURES_BY_ID",
    "QUESTION_SCHEMA",
    "Entry",
    "Factor",
    "Measure",
    "Question",
    "QuestionFormat",
    "Scale",
    "Target",
    "get_measure",
]
