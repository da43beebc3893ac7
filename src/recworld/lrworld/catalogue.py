"""The LRWorld measure catalogue (paper Table 1): 3 scales, 10 factors.

The paper counts 31 measures as (measure × dataset) pairs; here a measure is
defined once and built on every dataset that has the fields it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from recworld.data.dataset import Domain
from recworld.lrworld.schema import QuestionFormat


class Scale(StrEnum):
    ASSOCIATION = "association"
    PERSONALIZATION = "personalization"
    KNOWLEDGEABILITY = "knowledgeability"


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
}

ALL_DOMAINS = frozenset({Domain.MOVIE, Domain.PRODUCT})


@dataclass(frozen=True)
class Measure:
    """One question type: how it is asked, what it needs, where it applies."""

    id: str
    factor: Factor
    format: QuestionFormat
    domains: frozenset[Domain]
    requires: tuple[str, ...]  # item fields the dataset must have
    description: str

    @property
    def scale(self) -> Scale:
        return FACTOR_SCALE[self.factor]


def _m(
    id: str,
    factor: Factor,
    fmt: QuestionFormat,
    domains: frozenset[Domain],
    requires: tuple[str, ...],
    description: str,
) -> Measure:
    return Measure(id, factor, fmt, domains, requires, description)


HIT, MCQ = QuestionFormat.HIT_AT_1, QuestionFormat.MCQ
MOVIE, PRODUCT, MUSIC = (
    frozenset({Domain.MOVIE}),
    frozenset({Domain.PRODUCT}),
    frozenset({Domain.MUSIC}),
)

MEASURES: tuple[Measure, ...] = (
    _m(
        "assoc_rule",
        Factor.ASSOCIATION_RULES,
        HIT,
        ALL_DOMAINS,
        (),
        "pick the consequent of a mined association rule given its antecedent",
    ),
    _m(
        "mem_item_item",
        Factor.MEM_ITEM_ITEM,
        HIT,
        ALL_DOMAINS,
        (),
        "pick the item with the highest cosine to the target over binary user vectors",
    ),
    _m(
        "mem_user_user",
        Factor.MEM_USER_USER,
        HIT,
        ALL_DOMAINS,
        (),
        "pick the user with the highest cosine to the target over binary item vectors",
    ),
    _m(
        "neu_item2users",
        Factor.NEU_ITEM2USERS,
        HIT,
        ALL_DOMAINS,
        (),
        "pick the user closest to the target item in NeuMF embedding space",
    ),
    _m(
        "neu_user2items",
        Factor.NEU_USER2ITEMS,
        HIT,
        ALL_DOMAINS,
        (),
        "pick the item closest to the target user in NeuMF embedding space",
    ),
    _m(
        "kg_movie_cast",
        Factor.ENTITY_RELATION,
        MCQ,
        MOVIE,
        ("cast",),
        "infer the cast of the movie the user watches next",
    ),
    _m(
        "kg_movie_director",
        Factor.ENTITY_RELATION,
        MCQ,
        MOVIE,
        ("director",),
        "infer the director of the movie the user watches next",
    ),
    _m(
        "kg_prod_brand",
        Factor.ENTITY_RELATION,
        MCQ,
        PRODUCT,
        ("brand",),
        "infer the brand of the product the user buys next",
    ),
    _m(
        "kg_movie_genre",
        Factor.ENTITY_ATTRIBUTE,
        MCQ,
        MOVIE,
        ("genres",),
        "infer the genres of the movie the user watches next",
    ),
    _m(
        "kg_prod_color",
        Factor.ENTITY_ATTRIBUTE,
        MCQ,
        PRODUCT,
        ("color",),
        "infer the colour of the product the user buys next",
    ),
    _m(
        "taxo_leaf",
        Factor.TAXONOMY,
        MCQ,
        PRODUCT,
        ("categories",),
        "infer the leaf category of the product the user buys next",
    ),
    _m(
        "taxo_interm",
        Factor.TAXONOMY,
        MCQ,
        PRODUCT,
        ("categories",),
        "infer an intermediate category of the product the user buys next",
    ),
    _m(
        "taxo_root",
        Factor.TAXONOMY,
        MCQ,
        PRODUCT,
        ("categories",),
        "infer the root category of the product the user buys next",
    ),
    _m(
        "text_logline",
        Factor.TEXT_KNOWLEDGE,
        MCQ,
        MOVIE,
        ("logline",),
        "pick the next movie when history and choices are shown as loglines only",
    ),
    _m(
        "mm_poster",
        Factor.MULTIMODAL_KNOWLEDGE,
        MCQ,
        MOVIE,
        ("image_description",),
        "pick the next movie when history and choices are shown as poster descriptions",
    ),
    _m(
        "mm_image",
        Factor.MULTIMODAL_KNOWLEDGE,
        MCQ,
        PRODUCT,
        ("image_description",),
        "pick the next product when history and choices are shown as image descriptions",
    ),
    _m(
        "lastfm_next_artist",
        Factor.ASSOCIATION_RULES,
        HIT,
        MUSIC,
        (),
        "LastFM (paper §5.5): pick the artist the user listens to next",
    ),
    _m(
        "lastfm_artist_genre",
        Factor.ENTITY_ATTRIBUTE,
        MCQ,
        MUSIC,
        ("genres",),
        "LastFM (paper §5.5): infer the genre of the artist the user listens to next",
    ),
)

MEASURES_BY_ID: dict[str, Measure] = {m.id: m for m in MEASURES}


def get_measure(measure_id: str) -> Measure:
    from recworld.errors import ConfigError

    try:
        return MEASURES_BY_ID[measure_id]
    except KeyError:
        known = ", ".join(MEASURES_BY_ID)
        raise ConfigError(f"unknown measure {measure_id!r}; known: {known}") from None
