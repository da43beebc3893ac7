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

Each is summarised over the facts (mean, median, 90th percentile, max).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

import numpy as np

from recworld.records import FrozenRecord

CANDIDATES = 5
NEAR_COPY = 0.8
_TOKEN = re.compile(r"[a-z0-9]+")


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


def tokens(text: str) -> set[str]:
    return set(_TOKEN.findall(text.lower()))


def _spread(values: Sequence[float]) -> Spread | None:
    if not values:
        return None
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


def copy_distance(facts: Sequence[tuple[str, str]], lines: Mapping[str, Sequence[str]]) -> CopyDistance:
    """The distance of ``(user_id, fact)`` pairs from their user's record ``lines``."""
    sets = {user: [tokens(line) for line in rows] for user, rows in lines.items()}
    pairs = [closeness(fact, lines.get(user, ()), sets.get(user)) for user, fact in facts]
    overlap = [p[0] for p in pairs]
    return CopyDistance(
        n=len(pairs),
        token_overlap=_spread(overlap),
        char_similarity=_spread([p[1] for p in pairs]),
        near_copies=sum(o >= NEAR_COPY for o in overlap) / len(overlap) if overlap else None,
    )
