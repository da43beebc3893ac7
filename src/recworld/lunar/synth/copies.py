"""Which synthetic records copy a real anchor's content (and must not be released).

The hard-anchor prompt asks the model to match the anchors' *timing, category
and place*, so a synthetic record in the same minute, domain and type is the
intended outcome, not a leak. What leaks is *content*: a record that repeats
an anchor's title, name or id, or reproduces most of its text fields (a copy
shifted in time, or with one field added, still leaks). Matching is done on
normalised text: case and whitespace folded, punctuation dropped, and compared
with a fuzzy ratio so a near-verbatim copy counts as a copy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher

from recworld.lunar.schemas import BehaviourRecord, FieldValue, Provenance

# Field keys whose values identify the real item or person (the prompt never asks to match these).
IDENTITY_KEYS = frozenset(
    {"title", "name", "item", "item_name", "product", "product_name", "movie", "song", "track", "album"}
    | {"book", "asin", "isbn", "sku", "id", "item_id", "product_id", "track_id", "movie_id"}
)
# Two folded texts at least this similar are the same text (typos, a dropped article, a year suffix).
FUZZY_SAME = 0.9
# A synthetic record reproducing at least this share of an anchor's text fields is a copy.
COPY_SHARE = 0.8
_NON_WORD = re.compile(r"[^\w]+")
_YEAR_SUFFIX = re.compile(r"\s*\(\d{4}\)\s*$")


def fold(value: FieldValue) -> str:
    """Case-, space- and punctuation-folded text of a field value ('' for numbers and booleans)."""
    if not isinstance(value, str):
        return ""
    text = _YEAR_SUFFIX.sub("", value)
    return " ".join(_NON_WORD.sub(" ", text).lower().split())


def same_text(a: str, b: str) -> bool:
    if not a or not b:
        return False
    if a == b:
        return True
    return min(len(a), len(b)) >= 4 and SequenceMatcher(None, a, b).ratio() >= FUZZY_SAME


def is_identity_key(key: str) -> bool:
    k = fold(key).replace(" ", "_")
    return k in IDENTITY_KEYS or k.endswith(("_title", "_id"))


def identity_values(record: BehaviourRecord) -> list[str]:
    """The folded titles, names and ids of a record."""
    return [v for k, raw in record.fields.items() if is_identity_key(k) and (v := fold(raw))]


def _text_values(record: BehaviourRecord) -> list[str]:
    return [v for raw in record.fields.values() if (v := fold(raw))]


def copies(record: BehaviourRecord, anchor: BehaviourRecord) -> bool:
    """Whether ``record`` repeats ``anchor``'s content, whatever its time."""
    mine = _text_values(record)
    if not mine:
        return False
    if any(same_text(a, b) for a in identity_values(anchor) for b in mine):
        return True
    theirs = _text_values(anchor)
    if not theirs:
        return False
    reproduced = sum(any(same_text(t, m) for m in mine) for t in theirs)
    return reproduced / len(theirs) >= COPY_SHARE


def remove_anchors(
    records: Sequence[BehaviourRecord], anchors: Iterable[BehaviourRecord]
) -> list[BehaviourRecord]:
    """Drop anchor rows and synthetic records that copy an anchor's content (same user)."""
    by_user: dict[str, list[BehaviourRecord]] = {}
    for a in anchors:
        by_user.setdefault(a.user_id, []).append(a)
    return [
        r
        for r in records
        if r.provenance is not Provenance.ANCHOR and not any(copies(r, a) for a in by_user.get(r.user_id, []))
    ]
