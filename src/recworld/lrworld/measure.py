"""What a measure is: its place in the paper's taxonomy and every fact other code needs about it.

The type lives apart from the table (:mod:`recworld.lrworld.catalogue`) so that
builders can name :class:`Measure` while the table names the builders, without
an import cycle. Everything about a measure is declared once, on its entry:
the suite builder, the baselines and the tests read these fields instead of
keeping their own lists of measure ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from recworld.data.dataset import Domain
from recworld.lrworld.schema import QuestionFormat

if TYPE_CHECKING:
    import numpy as np

    from recworld.lrworld.context import BuildContext
    from recworld.lrworld.schema import Question


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


class MeasureBuilder(Protocol):
    """Builds one measure's questions; each catalogue entry carries its own."""

    def unavailable(self, ctx: BuildContext) -> str | None:
        """Why this dataset cannot give this measure (beyond missing fields), or None."""
        ...

    def build(self, ctx: BuildContext, measure: Measure, rng: np.random.Generator) -> list[Question]:
        """Up to ``ctx.config.per_measure`` questions, drawing only from ``rng``."""
        ...


@dataclass(frozen=True)
class Measure:
    """One question type: how it is asked, what it needs, where it applies, who builds it."""

    id: str
    factor: Factor
    format: QuestionFormat
    domains: frozenset[Domain]
    requires: tuple[str, ...]  # item fields the dataset must have
    description: str
    builder: MeasureBuilder = field(compare=False, repr=False)
    options: OptionKind
    # True: the prompt shows the target (an item or user) and no history;
    # False: it shows the target user's history and asks about the next item.
    shows_target: bool

    @property
    def scale(self) -> Scale:
        return FACTOR_SCALE[self.factor]
