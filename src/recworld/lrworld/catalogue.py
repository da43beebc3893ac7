"""The LRWorld measure catalogue (paper Table 1): 3 scales, 10 factors, one entry per measure.

The paper counts 31 measures as (measure × dataset) pairs; here a measure is
defined once and built on every dataset that has the fields it needs. This
table is the only place that lists measure ids: each entry carries its report
label, its builder family (named, with its parameters), what its options are,
whether its prompt shows the target and whether it uses images, and every
other module reads those facts from here.

The table is pure data: it imports no builder, no data loader and no numeric
library, so scoring and the report can read it cheaply
(``tests/lrworld/test_catalogue.py`` checks what ``import recworld.scoring`` loads).
"""

from __future__ import annotations

from recworld.domain import Domain
from recworld.errors import ConfigError
from recworld.lrworld.measure import (
    FACTOR_SCALE,
    AttributeSpec,
    BuilderSpec,
    Factor,
    Measure,
    MemorySpec,
    NeuralSpec,
    NextItemSpec,
    OptionKind,
    RuleSpec,
    Scale,
)
from recworld.lrworld.schema import QuestionFormat

__all__ = [
    "FACTOR_SCALE",
    "MEASURES",
    "MEASURES_BY_ID",
    "BuilderSpec",
    "Factor",
    "Measure",
    "OptionKind",
    "Scale",
    "get_measure",
]

ALL_DOMAINS = frozenset({Domain.MOVIE, Domain.PRODUCT})
# Top-billed cast members only: "main cast" in the paper's words.
LEAD_CAST = 3

HIT, MCQ, HIT20 = QuestionFormat.HIT_AT_1, QuestionFormat.MCQ, QuestionFormat.HIT_AT_1_OF_20
MOVIE, PRODUCT, MUSIC = (
    frozenset({Domain.MOVIE}),
    frozenset({Domain.PRODUCT}),
    frozenset({Domain.MUSIC}),
)

MEASURES: tuple[Measure, ...] = (
    Measure(
        id="assoc_rule",
        label="Assoc rule",
        factor=Factor.ASSOCIATION_RULES,
        format=HIT,
        domains=ALL_DOMAINS,
        requires=(),
        description="pick the consequent of a mined association rule given its antecedent",
        builder=RuleSpec(),
        options=OptionKind.ITEM,
        shows_target=True,
    ),
    Measure(
        id="mem_item_item",
        label="Mem item-item",
        factor=Factor.MEM_ITEM_ITEM,
        format=HIT,
        domains=ALL_DOMAINS,
        requires=(),
        description="pick the item with the highest cosine to the target over binary user vectors",
        builder=MemorySpec("item"),
        options=OptionKind.ITEM,
        shows_target=True,
    ),
    Measure(
        id="mem_user_user",
        label="Mem user-user",
        factor=Factor.MEM_USER_USER,
        format=HIT,
        domains=ALL_DOMAINS,
        requires=(),
        description="pick the user with the highest cosine to the target over binary item vectors",
        builder=MemorySpec("user"),
        options=OptionKind.USER,
        shows_target=True,
    ),
    Measure(
        id="neu_item2users",
        label="Neu emb item2users",
        factor=Factor.NEU_ITEM2USERS,
        format=HIT,
        domains=ALL_DOMAINS,
        requires=(),
        description="pick the user closest to the target item in NeuMF embedding space",
        builder=NeuralSpec("item"),
        options=OptionKind.USER,
        shows_target=True,
    ),
    Measure(
        id="neu_user2items",
        label="Neu emb user2items",
        factor=Factor.NEU_USER2ITEMS,
        format=HIT,
        domains=ALL_DOMAINS,
        requires=(),
        description="pick the item closest to the target user in NeuMF embedding space",
        builder=NeuralSpec("user"),
        options=OptionKind.ITEM,
        shows_target=True,
    ),
    Measure(
        id="kg_movie_cast",
        label="KG (movie, cast)",
        factor=Factor.ENTITY_RELATION,
        format=MCQ,
        domains=MOVIE,
        requires=("cast",),
        description="infer the cast of the movie the user watches next",
        builder=AttributeSpec("cast", lead=LEAD_CAST),
        options=OptionKind.ATTRIBUTE,
        shows_target=False,
    ),
    Measure(
        id="kg_movie_director",
        label="KG (movie, director)",
        factor=Factor.ENTITY_RELATION,
        format=MCQ,
        domains=MOVIE,
        requires=("director",),
        description="infer the director of the movie the user watches next",
        builder=AttributeSpec("director"),
        options=OptionKind.ATTRIBUTE,
        shows_target=False,
    ),
    Measure(
        id="kg_prod_brand",
        label="KG (prod, brand)",
        factor=Factor.ENTITY_RELATION,
        format=MCQ,
        domains=PRODUCT,
        requires=("brand",),
        description="infer the brand of the product the user buys next",
        builder=AttributeSpec("brand"),
        options=OptionKind.ATTRIBUTE,
        shows_target=False,
    ),
    Measure(
        id="kg_movie_genre",
        label="KG (movie, genre)",
        factor=Factor.ENTITY_ATTRIBUTE,
        format=MCQ,
        domains=MOVIE,
        requires=("genres",),
        description="infer the genres of the movie the user watches next",
        builder=AttributeSpec("genres"),
        options=OptionKind.ATTRIBUTE,
        shows_target=False,
    ),
    Measure(
        id="kg_prod_color",
        label="KG (prod, color)",
        factor=Factor.ENTITY_ATTRIBUTE,
        format=MCQ,
        domains=PRODUCT,
        requires=("color",),
        description="infer the colour of the product the user buys next",
        builder=AttributeSpec("color"),
        options=OptionKind.ATTRIBUTE,
        shows_target=False,
    ),
    Measure(
        id="taxo_leaf",
        label="Taxo (prod, leaf)",
        factor=Factor.TAXONOMY,
        format=MCQ,
        domains=PRODUCT,
        requires=("categories",),
        description="infer the leaf category of the product the user buys next",
        builder=AttributeSpec("categories", level="leaf"),
        options=OptionKind.ATTRIBUTE,
        shows_target=False,
    ),
    Measure(
        id="taxo_interm",
        label="Taxo (prod, interm)",
        factor=Factor.TAXONOMY,
        format=MCQ,
        domains=PRODUCT,
        requires=("categories",),
        description="infer an intermediate category of the product the user buys next",
        builder=AttributeSpec("categories", level="interm"),
        options=OptionKind.ATTRIBUTE,
        shows_target=False,
    ),
    Measure(
        id="taxo_root",
        label="Taxo (prod, root)",
        factor=Factor.TAXONOMY,
        format=MCQ,
        domains=PRODUCT,
        requires=("categories",),
        description="infer the root category of the product the user buys next",
        builder=AttributeSpec("categories", level="root"),
        options=OptionKind.ATTRIBUTE,
        shows_target=False,
    ),
    Measure(
        id="text_logline",
        label="Text knowledge",
        factor=Factor.TEXT_KNOWLEDGE,
        format=MCQ,
        domains=MOVIE,
        requires=("logline",),
        description="pick the next movie when history and choices are shown as loglines only",
        builder=NextItemSpec("logline"),
        options=OptionKind.ITEM,
        shows_target=False,
    ),
    Measure(
        id="mm_poster",
        label="Multimodal (poster)",
        factor=Factor.MULTIMODAL_KNOWLEDGE,
        format=MCQ,
        domains=MOVIE,
        requires=("image_description",),
        description="pick the next movie when history and choices are shown as poster descriptions",
        builder=NextItemSpec("image_description"),
        options=OptionKind.ITEM,
        shows_target=False,
        uses_images=True,
    ),
    Measure(
        id="mm_image",
        label="Multimodal (image)",
        factor=Factor.MULTIMODAL_KNOWLEDGE,
        format=MCQ,
        domains=PRODUCT,
        requires=("image_description",),
        description="pick the next product when history and choices are shown as image descriptions",
        builder=NextItemSpec("image_description"),
        options=OptionKind.ITEM,
        shows_target=False,
        uses_images=True,
    ),
    Measure(
        id="lastfm_next_artist",
        label="Next artist",
        factor=Factor.LASTFM_NEXT_ARTIST,
        format=HIT20,
        domains=MUSIC,
        requires=(),
        description="LastFM (paper §5.5, as LLaRA): pick the next artist among 20 from up to 10 before",
        builder=NextItemSpec(None),
        options=OptionKind.ITEM,
        shows_target=False,
    ),
    Measure(
        id="lastfm_artist_genre",
        label="Artist genre",
        factor=Factor.LASTFM_ARTIST_GENRE,
        format=MCQ,
        domains=MUSIC,
        requires=("genres",),
        description="LastFM (paper §5.5): infer the genre of the artist the user listens to next",
        builder=AttributeSpec("genres"),
        options=OptionKind.ATTRIBUTE,
        shows_target=False,
    ),
)

MEASURES_BY_ID: dict[str, Measure] = {m.id: m for m in MEASURES}


def get_measure(measure_id: str) -> Measure:
    try:
        return MEASURES_BY_ID[measure_id]
    except KeyError:
        known = ", ".join(MEASURES_BY_ID)
        raise ConfigError(f"unknown measure {measure_id!r}; known: {known}") from None
