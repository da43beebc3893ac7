"""One builder per measure family, registered in a single table keyed by measure id.

Adding a measure to a dataset family is one entry here (plus its catalogue
entry and prompt template): the builders are generic over the field they read.
"""

from __future__ import annotations

from recworld.lrworld.builders.assoc import AssocRuleBuilder
from recworld.lrworld.builders.attribute import AttributeBuilder
from recworld.lrworld.builders.base import MeasureBuilder, QuestionMaker, draw_distinct
from recworld.lrworld.builders.memory import MemoryBuilder
from recworld.lrworld.builders.neural import NeuralBuilder
from recworld.lrworld.builders.next_item import NextItemBuilder

# Top-billed cast members only: "main cast" in the paper's words.
LEAD_CAST = 3

BUILDERS: dict[str, MeasureBuilder] = {
    "assoc_rule": AssocRuleBuilder(),
    "mem_item_item": MemoryBuilder("item"),
    "mem_user_user": MemoryBuilder("user"),
    "neu_item2users": NeuralBuilder("item"),
    "neu_user2items": NeuralBuilder("user"),
    "kg_movie_cast": AttributeBuilder("cast", lead=LEAD_CAST),
    "kg_movie_director": AttributeBuilder("director"),
    "kg_movie_genre": AttributeBuilder("genres"),
    "kg_prod_brand": AttributeBuilder("brand"),
    "kg_prod_color": AttributeBuilder("color"),
    "taxo_root": AttributeBuilder("categories", level="root"),
    "taxo_interm": AttributeBuilder("categories", level="interm"),
    "taxo_leaf": AttributeBuilder("categories", level="leaf"),
    "text_logline": NextItemBuilder("logline"),
    "mm_poster": NextItemBuilder("image_description"),
    "mm_image": NextItemBuilder("image_description"),
    "lastfm_next_artist": NextItemBuilder(None),
    "lastfm_artist_genre": AttributeBuilder("genres"),
}

__all__ = [
    "BUILDERS",
    "AssocRuleBuilder",
    "AttributeBuilder",
    "MeasureBuilder",
    "MemoryBuilder",
    "NeuralBuilder",
    "NextItemBuilder",
    "QuestionMaker",
    "draw_distinct",
]
