"""How far a memory's facts are from copies of the user's records: the memory context's fidelity check.

The paper attributes the gap between RAG and agentic memory to the information
distortion of compressed memory. A memory whose facts are near-copies of record
lines cannot show that gap, so every run measures it, per fact, against the user's
own record lines (local time, no record ids):

* ``token_overlap``: the largest share of the fact's word tokens (lower-cased
  letters and digits) found in one record line; 1.0 means every word of the fact
  is in some single record;
* ``char_similarity``: the largest :class:`difflib.SequenceMatcher` ratio between
  the fact and one record line (case-folded). It is computed against the
  :data:`CANDIDATES` lines with the highest token overlap, since a line sharing few
  words cannot be a close character match;
* ``near_copies``: the share of facts with ``token_overlap >= NEAR_COPY``.

Each is summarised over the facts (mean, median, 90th percentile, max). Wording alone
cannot tell abstraction from garbling or loss (review U7: facts with a record value glued
into ``arevegetarian-based`` scored overlap 0), so the information kept is measured too,
on the user's distinct record field values (booleans and values of fewer than
:data:`MIN_VALUE_CHARS` letters and digits left out):

* ``value_recall``: per user, the share of their values found in any of their facts,
  summarised over users;
* ``value_precision``: the share of facts that name at least one of their user's values;
* ``facts_per_record``: facts per record line.

Invariant: a value is found in a text exactly when its letters and digits, case-folded
and without diacritics, appear consecutively in the text's letters and digits (so case,
spacing, punctuation and glued tokens do not hide it).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping, Sequence

from recworld.records import FrozenRecord

CANDIDATES = 5
NEAR_COPY = 0.8
MIN_VALUE_CHARS = 3  # shorter values ("2", "ok") are found by chance in any text
_TOKEN = re.compile(r"[a-z0-9]+")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


class Spread(FrozenRecord):
    mean: float
    median: float
    p90: float
    max: float


class CopyDistance(FrozenRecord):
    """How copy-like a set of facts is (see the module docstring); None spreads when there are no facts."""

    n: int
    token_overlap: Spread | None
    char_similarity: Spread | None
    near_copies: float | None  # share of facts with token_overlap >= near_copy
    near_copy: float = NEAR_COPY
    # Information kept (None for runs written before these were measured, or without values):
    value_recall: Spread | None = None  # per user: share of their record values named by a fact
    value_precision: float | None = None  # share of facts naming one of their user's values
    facts_per_record: float | None = None


def squash(text: str) -> str:
    """``text``'s letters and digits only, case-folded, without diacritics (``Café-Nero`` → ``cafenero``)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _NOT_ALNUM.sub("", plain.casefold())


def value_keys(values: Sequence[object]) -> set[str]:
    """The distinct squashed record values worth finding (no booleans, at least MIN_VALUE_CHARS)."""
    keys = {squash(str(v)) for v in values if not isinstance(v, bool)}
    return {k for k in keys if len(k) >= MIN_VALUE_CHARS}


def tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def _spread(values: Sequence[float]) -> Spread | None:
    if not values:
        return None
    import numpy as np

    a = np.asarray(values, dtype=float)
    return Spread(
        mean=float(a.mean()), median=float(np.median(a)), p90=float(np.quantile(a, 0.9)), max=float(a.max())
    )


def closeness(
    fact: str, lines: Sequence[str], line_tokens: Sequence[set[str]] | None = None
) -> tuple[float, float]:
    """(token overlap, char similarity) of ``fact`` to its closest line of ``lines`` (0, 0 without lines)."""
    words = tokens(fact)
    if not lines or not words:
        return 0.0, 0.0
    sets = line_tokens if line_tokens is not None else [tokens(line) for line in lines]
    overlaps = [len(words & t) / len(words) for t in sets]
    order = sorted(range(len(lines)), key=lambda i: -overlaps[i])[:CANDIDATES]
    folded = fact.lower()
    similarity = max(difflib.SequenceMatcher(None, folded, lines[i].lower()).ratio() for i in order)
    return max(overlaps), similarity


def copy_distance(
    facts: Sequence[tuple[str, str]],
    lines: Mapping[str, Sequence[str]],
    values: Mapping[str, Sequence[object]] | None = None,
) -> CopyDistance:
    """The distance of ``(user_id, fact)`` pairs from their user's record ``lines``.

    ``values``: each user's record field values, for the information measures.
    """
    sets = {user: [tokens(line) for line in rows] for user, rows in lines.items()}
    pairs = [closeness(fact, lines.get(user, ()), sets.get(user)) for user, fact in facts]
    overlap = [p[0] for p in pairs]
    recall, precision = _information(facts, values or {})
    records = sum(len(rows) for rows in lines.values())
    return CopyDistance(
        n=len(pairs),
        token_overlap=_spread(overlap),
        char_similarity=_spread([p[1] for p in pairs]),
        near_copies=sum(o >= NEAR_COPY for o in overlap) / len(overlap) if overlap else None,
        value_recall=_spread(recall),
        value_precision=precision,
        facts_per_record=len(facts) / records if records else None,
    )


def _information(
    facts: Sequence[tuple[str, str]], values: Mapping[str, Sequence[object]]
) -> tuple[list[float], float | None]:
    """(value recall per user with values, share of facts naming a value of their user)."""
    keys = {user: value_keys(vs) for user, vs in values.items()}
    named: dict[str, set[str]] = {user: set() for user in keys}
    grounded = 0
    for user, fact in facts:
        text = squash(fact)
        found = {k for k in keys.get(user, set()) if k in text}
        named.setdefault(user, set()).update(found)
        grounded += bool(found)
    recall = [len(named[u]) / len(ks) for u, ks in sorted(keys.items()) if ks]
    return recall, (grounded / len(facts) if facts and values else None)
