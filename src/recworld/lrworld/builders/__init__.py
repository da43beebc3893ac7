"""One builder per measure family, generic over the field it reads.

Which builder serves which measure is declared on the measure's own catalogue
entry (:attr:`recworld.lrworld.catalogue.Measure.builder`), not in a table here:
adding a measure to a dataset family is one catalogue entry plus its prompt template.
"""

from __future__ import annotations

from recworld.lrworld.builders.assoc import AssocRuleBuilder
from recworld.lrworld.builders.attribute import AttributeBuilder
from recworld.lrworld.builders.base import QuestionMaker, draw_distinct
from recworld.lrworld.builders.memory import MemoryBuilder
from recworld.lrworld.builders.neural import NeuralBuilder
from recworld.lrworld.builders.next_item import NextItemBuilder
from recworld.lrworld.measure import MeasureBuilder

__all__ = [
    "AssocRuleBuilder",
    "AttributeBuilder",
    "MeasureBuilder",
    "MemoryBuilder",
    "NeuralBuilder",
    "NextItemBuilder",
    "QuestionMaker",
    "draw_distinct",
]
