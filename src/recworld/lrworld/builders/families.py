"""From a catalogue entry's builder family to the builder object that makes its questions.

The catalogue names builders as data (:data:`~recworld.lrworld.measure.BuilderSpec`);
this is the one place a family becomes its implementation, so importing the
catalogue never imports the build engine.
"""

from __future__ import annotations

from typing import assert_never

from recworld.lrworld.builders.assoc import AssocRuleBuilder
from recworld.lrworld.builders.attribute import AttributeBuilder
from recworld.lrworld.builders.base import MeasureBuilder
from recworld.lrworld.builders.memory import MemoryBuilder
from recworld.lrworld.builders.neural import NeuralBuilder
from recworld.lrworld.builders.next_item import NextItemBuilder
from recworld.lrworld.measure import (
    AttributeSpec,
    BuilderSpec,
    MemorySpec,
    NeuralSpec,
    NextItemSpec,
    RuleSpec,
)

__all__ = ["builder_for"]


def builder_for(spec: BuilderSpec) -> MeasureBuilder:
    """The builder of a measure's family, with the entry's parameters."""
    match spec:
        case RuleSpec():
            return AssocRuleBuilder()
        case MemorySpec(kind=kind):
            return MemoryBuilder(kind)
        case NeuralSpec(kind=kind):
            return NeuralBuilder(kind)
        case AttributeSpec(field=field, level=level, lead=lead):
            return AttributeBuilder(field, level=level, lead=lead)
        case NextItemSpec(view=view):
            return NextItemBuilder(view)
        case _:
            assert_never(spec)
