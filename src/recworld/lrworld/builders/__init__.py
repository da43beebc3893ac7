"""One builder per measure family, generic over the field it reads.

Which family serves which measure is declared on the measure's own catalogue
entry (:attr:`recworld.lrworld.measure.Measure.builder`, a name and its
parameters), not in a table here; :func:`builder_for` resolves it. Adding a
measure to an existing family is one catalogue entry plus its prompt template.
"""

from __future__ import annotations

from recworld.lrworld.builders.assoc import AssocRuleBuilder
from recworld.lrworld.builders.attribute import AttributeBuilder
from recworld.lrworld.builders.base import MeasureBuilder, QuestionMaker, draw_distinct
from recworld.lrworld.builders.families import builder_for
from recworld.lrworld.builders.memory import MemoryBuilder
from recworld.lrworld.builders.neural import NeuralBuilder
from recworld.lrworld.builders.next_item import NextItemBuilder

__all__ = [
    "AssocRuleBuilder",
    "AttributeBuilder",
    "MeasureBuilder",
    "MemoryBuilder",
    "NeuralBuilder",
    "NextItemBuilder",
    "QuestionMaker",
    "builder_for",
    "draw_distinct",
]
