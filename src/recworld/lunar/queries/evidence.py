"""Choosing a query's evidence: relevance over all of a domain's records, a fair cap across domains.

The rubric's evidence set decides what "curated" shows, what the judge expects,
and whether a query counts as multi-domain (Table 5, Fig. 3), so its selection
must not depend on a domain's name or on recency:

* each domain's candidates are its ``per_domain`` records most relevant to the
  query (the run's embedder when one is given, else word overlap), taken from
  *all* of its records, not the newest ones;
* the global cap is shared round-robin over the useful domains, strongest
  domain first, so no useful domain is cut to nothing while another keeps five;
* a query's domains and ``multi_domain`` flag come from its evidence, and a
  query whose rubric has no evidence or no points is dropped (and counted).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, tzinfo

from recworld.lunar.schemas import BehaviourRecord, Category, Query, Rubric
from recworld.runner import BlockingEmbedder

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    (
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "what",
        "where",
        "when",
        "which",
        "should",
        "could",
        "would",
        "about",
        "from",
        "into",
        "your",
        "you",
        "have",
        "has",
        "had",
        "are",
        "was",
        "were",
        "will",
        "can",
        "any",
        "some",
        "need",
        "want",
        "like",
        "get",
        "make",
        "give",
        "tell",
        "our",
        "its",
    )
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOP}


def relevance(
    query: str,
    records: Sequence[BehaviourRecord],
    embedder: BlockingEmbedder | None = None,
    zone: tzinfo = UTC,
) -> list[float]:
    """A relevance score per record (its line in the user's ``zone``): cosine with the query, or overlap."""
    if not records:
        return []
    lines = [f"{r.domain.value} {r.type.value} {r.to_line(zone)}" for r in records]
    if embedder is not None:
        vectors = embedder.embed([*lines, query])
        return [float(v) for v in vectors[:-1] @ vectors[-1]]
    wanted = _words(query)
    out = []
    for line in lines:
        words = _words(line)
        out.append(len(wanted & words) / math.sqrt(len(words)) if words else 0.0)
    return out


def candidates(
    records: Sequence[BehaviourRecord], scores: Sequence[float], per_domain: int
) -> list[BehaviourRecord]:
    """The ``per_domain`` most relevant records (ties: newest first), shown in time order."""
    ranked = sorted(
        range(len(records)), key=lambda i: (-scores[i], -records[i].timestamp, records[i].record_id)
    )
    chosen = [records[i] for i in ranked[:per_domain]]
    return sorted(chosen, key=lambda r: (r.timestamp, r.record_id))


def fair_cap(chosen: Mapping[Category, Sequence[str]], score: Mapping[str, float], cap: int) -> list[str]:
    """Round-robin over domains (strongest first), each domain's ids by relevance, up to ``cap`` ids."""
    ranked = {
        d: sorted(dict.fromkeys(ids), key=lambda i: (-score.get(i, 0.0), i))
        for d, ids in chosen.items()
        if ids
    }
    order = sorted(ranked, key=lambda d: (-score.get(ranked[d][0], 0.0), d.value))
    out: list[str] = []
    depth = 0
    while len(out) < cap and any(depth < len(ranked[d]) for d in order):
        for d in order:
            if depth < len(ranked[d]) and len(out) < cap and ranked[d][depth] not in out:
                out.append(ranked[d][depth])
        depth += 1
    return out


def supported(query: Query, rubric: Rubric) -> Query | None:
    """The query tagged with its evidence domains, or None when the rubric cannot ground a judgment."""
    if not rubric.evidence.record_ids or not rubric.points or not rubric.evidence.domains:
        return None
    domains = sorted(set(rubric.evidence.domains))
    return query.model_copy(update={"domains": domains, "multi_domain": len(domains) > 1})


def keep_supported(pairs: Sequence[tuple[Query, Rubric | None]]) -> tuple[list[tuple[Query, Rubric]], int]:
    """Pairs whose rubric has evidence and points (queries re-tagged from evidence), and how many were dropped
    for lacking them (pairs without a rubric are not counted here: the stage counts them as failures)."""
    kept: list[tuple[Query, Rubric]] = []
    unsupported = 0
    for query, rubric in pairs:
        if rubric is None:
            continue
        tagged = supported(query, rubric)
        if tagged is None:
            unsupported += 1
        else:
            kept.append((tagged, rubric))
    return kept, unsupported
