"""How measures show items and users: full text, title line, or one item field; and item identity.

One place decides each rendering, so the builders, the noisy variant and the
oracle all see an item the same way (``evidence["view"]`` names it on a question).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import pandas as pd

from recworld.data.dataset import Domain
from recworld.lrworld.options import fold

__all__ = [
    "TEXT_VIEW",
    "TITLE_VIEW",
    "describe_item",
    "item_identity",
    "render_item",
    "render_user",
    "title_line",
]


def describe_item(row: Mapping[Hashable, Any], domain: Domain) -> str:
    """The default text of an item: ``Title (Year), Genre|Genre`` for movies, title and key fields else.

    A music artist is its name only, as in LLaRA's LastFM prompts (paper Table 24):
    a genre word inside a comma-joined artist history would read as one more artist.
    """
    title = str(row.get("title") or row["item_id"])
    if domain is Domain.MUSIC:
        return title
    year = row.get("year")
    if year is not None and not pd.isna(year):
        title = f"{title} ({int(year)})"
    extras: list[str] = []
    if domain is Domain.PRODUCT:
        brand = row.get("brand")
        if isinstance(brand, str) and brand:
            extras.append(f"brand {brand}")
        categories = row.get("categories")
        if categories is not None and len(categories):
            extras.append(str(categories[-1]))
    else:
        genres = row.get("genres")
        if genres is not None and len(genres):
            extras.append("|".join(str(g) for g in genres))
    return ", ".join([title, *extras])


def title_line(row: Mapping[Hashable, Any], domain: Domain) -> str:
    """An item by its title only (with the year for movies): what ``--history-text title`` shows."""
    title = str(row.get("title") or row["item_id"])
    year = row.get("year")
    if domain is Domain.MOVIE and year is not None and not pd.isna(year):
        return f"{title} ({int(year)})"
    return title


# How a measure shows an item: ``text`` (describe_item), ``title`` (title_line), or an item field.
TEXT_VIEW, TITLE_VIEW = "text", "title"


def render_item(row: Mapping[Hashable, Any], domain: Domain, view: str) -> str | None:
    """An item as a measure shows it under ``view``; None when the item has no such field."""
    if view == TEXT_VIEW:
        return describe_item(row, domain)
    if view == TITLE_VIEW:
        return title_line(row, domain)
    value = row.get(view)
    return None if _is_missing(value) or str(value) == "" else str(value)


def render_user(item_texts: Iterable[str]) -> str:
    """A user shown by their items (oldest first), as user targets and user options read."""
    return "; ".join(item_texts)


def item_identity(row: Mapping[Hashable, Any], domain: Domain) -> str:
    """The key under which two items are "the same product" to a reader: folded title (and year).

    Amazon lists one product's variants under several ASINs with one title,
    MovieLens lists some movies twice: such items must never be told apart by
    a question, so options, targets and history items are compared under it.
    """
    return fold(title_line(row, domain))


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)
