"""What a measure is: its place in the paper's taxonomy and every fact other code needs about it.

The type lives apart from the table (:mod:`recworld.lrworld.catalogue`) so the
table stays a list of entries. Everything about a measure is declared once, on
its entry: the suite builder, the baselines, the report and the tests read
these fields instead of keeping their own lists of measure ids.

A measure does not hold its builder. It names its **builder family** with a
:data:`BuilderSpec` (plain data: the family and its parameters), and the code
that needs the builder resolves it (:func:`recworld.lrworld.builders.builder_for`),
so reading the catalogue never imports the build engine or a data loader.
Each family is a closed set: every consumer that depends on the family (the
builder, the oracle's recomputed ground truth, the report's case-study scores,
the brute-force test) matches on :data:`BuilderSpec` exhaustively, so a new
family that one of them lacks fails the type check and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from recworld.domain import Domain
from recworld.lrworld.schema import EntityKind, QuestionFormat

__all__ = [
    "FACTOR_SCALE",
    "AttributeSpec",
    "BuilderSpec",
    "Factor",
    "Level",
    "Measure",
    "MemorySpec",
    "NeuralSpec",
    "NextItemSpec",
    "OptionKind",
    "RuleSpec",
    "Scale",
]


class Scale(StrEnum):
    ASSOCIATION = "association"
    PERSONALIZATION = "personalization"
    KNOWLEDGEABILITY = "knowledgeability"
    # The LastFM mini-benchmark (paper §5.5, Tables 7-8): its own group, outside the three scales.
    LASTFM = "lastfm mini-benchmark"


class Factor(StrEnum):
    ASSOCIATION_RULES = "association rules"
    MEM_ITEM_ITEM = "memory item-item"
    MEM_USER_USER = "memory user-user"
    NEU_ITEM2USERS = "neural item->users"
    NEU_USER2ITEMS = "neural user->items"
    ENTITY_RELATION = "entity relation"
    ENTITY_ATTRIBUTE = "entity attribute"
    TAXONOMY = "taxonomy"
    TEXT_KNOWLEDGE = "text knowledge"
    MULTIMODAL_KNOWLEDGE = "multimodal knowledge"
    # The LastFM mini-benchmark (paper §5.5, Tables 7-8) is reported apart from the ten factors:
    # <history, next-artist> and <artist, genre> (an entity-attribute question asked on LastFM).
    LASTFM_NEXT_ARTIST = "lastfm next artist"
    LASTFM_ARTIST_GENRE = "lastfm artist genre"


FACTOR_SCALE: dict[Factor, Scale] = {
    Factor.ASSOCIATION_RULES: Scale.ASSOCIATION,
    Factor.MEM_ITEM_ITEM: Scale.PERSONALIZATION,
    Factor.MEM_USER_USER: Scale.PERSONALIZATION,
    Factor.NEU_ITEM2USERS: Scale.PERSONALIZATION,
    Factor.NEU_USER2ITEMS: Scale.PERSONALIZATION,
    Factor.ENTITY_RELATION: Scale.KNOWLEDGEABILITY,
    Factor.ENTITY_ATTRIBUTE: Scale.KNOWLEDGEABILITY,
    Factor.TAXONOMY: Scale.KNOWLEDGEABILITY,
    Factor.TEXT_KNOWLEDGE: Scale.KNOWLEDGEABILITY,
    Factor.MULTIMODAL_KNOWLEDGE: Scale.KNOWLEDGEABILITY,
    # Table 8 reports the two LastFM factors on their own, never averaged into a scale of Table 1.
    Factor.LASTFM_NEXT_ARTIST: Scale.LASTFM,
    Factor.LASTFM_ARTIST_GENRE: Scale.LASTFM,
}


class OptionKind(StrEnum):
    """What a question's candidate ids are, so a reader never has to guess from the measure id."""

    ITEM = "item"
    USER = "user"
    # Values of the item field named by ``Question.evidence["field"]`` (a genre, a brand...).
    ATTRIBUTE = "attribute value"


# Which values of a list field an attribute question asks for: all of them, or one taxonomy level.
Level = Literal["all", "root", "interm", "leaf"]


# -- builder families: what a catalogue entry names instead of holding a builder ------------------


@dataclass(frozen=True)
class RuleSpec:
    """Association rules: the consequent of the antecedent's strongest mined pair rule."""


@dataclass(frozen=True)
class MemorySpec:
    """Memory CF: the nearest ``kind`` to a ``kind`` target by cosine over binary vectors."""

    kind: EntityKind


@dataclass(frozen=True)
class NeuralSpec:
    """NeuMF: the other side's entity closest to a ``kind`` target in the embedding space."""

    kind: EntityKind


@dataclass(frozen=True)
class AttributeSpec:
    """A value of item field ``field`` of the user's next item (``level``; the first ``lead`` only)."""

    field: str
    level: Level = "all"
    lead: int | None = None


@dataclass(frozen=True)
class NextItemSpec:
    """The user's next item, history and options shown by item field ``view`` (None: the default text)."""

    view: str | None = None


BuilderSpec = RuleSpec | MemorySpec | NeuralSpec | AttributeSpec | NextItemSpec


@dataclass(frozen=True)
class Measure:
    """One question type: how it is asked and reported, what it needs, where it applies, who builds it."""

    id: str
    # The column name in the report, as the paper prints it.
    label: str
    factor: Factor
    format: QuestionFormat
    domains: frozenset[Domain]
    requires: tuple[str, ...]  # item fields the dataset must have
    description: str
    builder: BuilderSpec
    options: OptionKind
    # True: the prompt shows the target (an item or user) and no history;
    # False: it shows the target user's history and asks about the next item.
    shows_target: bool
    # The ``describe+image`` variant attaches the last history item's own image to this prompt.
    uses_images: bool = False

    @property
    def scale(self) -> Scale:
        return FACTOR_SCALE[self.factor]
