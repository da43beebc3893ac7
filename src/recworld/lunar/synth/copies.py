"""Which synthetic records copy a real anchor's content (and must not be released).

The hard-anchor prompt asks the model to match the anchors' *timing, category
and kind of place*, so a synthetic record in the same minute, domain and type is the
intended outcome, not a leak. What leaks is *content*. A record copies an anchor when it

* repeats the anchor's title, name or id (:data:`IDENTITY_KEYS`);
* repeats any distinctive value of it, whatever the key: a merchant, a place, a booking
  reference, a note (:func:`recworld.lunar.leaks.distinctive`), or a number of five or more
  digits;
* shares two or more of its values (text, or numbers with three or more significant
  digits under the same key: a merchant and an amount, a place and a time of booking); or
* reproduces most of its text fields (a copy shifted in time, or with one field added).

Matching is done on normalised text: case and whitespace folded, punctuation dropped,
and compared with a fuzzy ratio so a near-verbatim copy counts as a copy. Values of
descriptive fields (genres, category, rating) count only towards the shared values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher

from recworld.lunar.leaks import ID_DIGITS, distinctive, field_kind, fold_words
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


def _contains_phrase(haystack: str, needle: str) -> bool:
    return f" {needle} " in f" {haystack} "


def _significant(value: FieldValue) -> bool:
    """A number specific enough that two records sharing it are related (37.85, 1299; not 4 or 12)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    digits = str(abs(value)).replace(".", "").strip("0")
    return len(digits) >= 3


def _long_number(value: FieldValue) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    text = str(abs(int(value)))
    return text if len(text) >= ID_DIGITS else None


def copy_kind(record: BehaviourRecord, anchor: BehaviourRecord) -> str | None:
    """Why ``record`` repeats ``anchor``'s content, whatever its time: the kind of value it copies.

    ``title``/``id``/``name``/``merchant``/``place``/``reference``/``field``/``number`` for a
    repeated identifying value, ``overlap`` for shared values or most text fields, None when
    the record is not a copy.
    """
    mine = _text_values(record)
    mine_numbers = {v for raw in record.fields.values() if (v := _long_number(raw))}
    if any(same_text(a, b) for a in identity_values(anchor) for b in mine):
        return next(
            (field_kind(k) or "title")
            for k, raw in anchor.fields.items()
            if is_identity_key(k) and any(same_text(fold(raw), b) for b in mine)
        )
    shared = 0
    for key, raw in anchor.fields.items():
        kind = field_kind(key)
        value = fold(raw)
        if value:
            found = any(same_text(value, m) for m in mine)
            if (
                kind is not None
                and distinctive(fold_words(value))
                and (found or any(_contains_phrase(m, value) for m in mine))
            ):
                return kind
            shared += found
        elif (number := _long_number(raw)) is not None and number in mine_numbers:
            return kind or "number"
        elif _significant(raw) and record.fields.get(key) == raw:
            shared += 1
    if shared >= 2:
        return "overlap"
    theirs = _text_values(anchor)
    if not mine or not theirs:
        return None
    reproduced = sum(any(same_text(t, m) for m in mine) for t in theirs)
    return "overlap" if reproduced / len(theirs) >= COPY_SHARE else None


def copies(record: BehaviourRecord, anchor: BehaviourRecord) -> bool:
    """Whether ``record`` repeats ``anchor``'s content, whatever its time."""
    return copy_kind(record, anchor) is not None


def remove_anchors(
    records: Sequence[BehaviourRecord],
    anchors: Iterable[BehaviourRecord],
    removed: list[tuple[BehaviourRecord, str]] | None = None,
) -> list[BehaviourRecord]:
    """Drop anchor rows and synthetic records that copy an anchor's content (same user).

    ``removed`` (when given) receives each dropped copy with the kind of value it copied.
    """
    by_user: dict[str, list[BehaviourRecord]] = {}
    for a in anchors:
        by_user.setdefault(a.user_id, []).append(a)
    kept = []
    for r in records:
        if r.provenance is Provenance.ANCHOR:
            continue
        kind = next((k for a in by_user.get(r.user_id, []) if (k := copy_kind(r, a)) is not None), None)
        if kind is None:
            kept.append(r)
        elif removed is not None:
            removed.append((r, kind))
    return kept
