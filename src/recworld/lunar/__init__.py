"""LUNAR: anchored behaviour-log synthesis, queries and rubrics, context settings, judges, quality.

See ``docs/lunar.md``. Heavy libraries (llama.cpp, sentence-transformers) load only when used.
"""

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
    "Demographic",
    "Profile",
    "Query",
    "Rubric",
    "Trajectory",
]
