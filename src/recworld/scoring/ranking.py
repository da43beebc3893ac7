"""Ranking metrics of ``--mode rank`` runs: HR@1, HR@3 and NDCG@10 over the full candidate ranking.

Rank mode scores every candidate, so a question yields a ranking rather than
one pick. HR@k is the share of questions whose answer is among the top k;
NDCG@10 with one relevant item is ``1 / log2(rank + 1)`` for a rank within
10, else 0. A tie is never broken silently: a sample whose top score is
shared is marked ``tie`` and has no answer (a miss, not "A"), and the answer's
rank counts every option scored at least as high as it, so a tie never earns
credit. The metrics count tied samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from recworld.scoring.records import RankingMetrics, SampleRecord

__all__ = ["RankingMetrics", "rank_scores", "ranking_metrics"]

# Scores closer than this are one score: float noise must not decide an answer.
TIE_TOLERANCE = 1e-9


def rank_scores(scores: Sequence[float | None]) -> tuple[tuple[int, ...], bool]:
    """Option indices best first (an unscored option last), and whether the best score is shared."""
    value = [-math.inf if s is None or math.isnan(s) else float(s) for s in scores]
    order = tuple(sorted(range(len(value)), key=lambda i: (-value[i], i)))
    if not order or value[order[0]] == -math.inf:
        return order, len(order) > 1
    top = value[order[0]]
    tie = len(order) > 1 and abs(value[order[1]] - top) <= TIE_TOLERANCE
    return order, tie


def _rank_of(sample: SampleRecord) -> int | None:
    """The answer's rank, counting every option scored at least as high (ties never help)."""
    if sample.ranking is None:
        return None
    scores = sample.choice_logprobs
    if scores is None or len(scores) != len(sample.labels):
        return sample.ranking.index(sample.answer_index) + 1
    value = [-math.inf if s is None else s for s in scores]
    mine = value[sample.answer_index]
    if mine == -math.inf:
        return len(value)
    return sum(v >= mine - TIE_TOLERANCE for v in value)


def ranking_metrics(samples: Sequence[SampleRecord]) -> dict[str, RankingMetrics]:
    """Per measure, over scored samples that carry a ranking (rank-mode runs); empty otherwise."""
    ranks: dict[str, list[int]] = {}
    ties: dict[str, int] = {}
    for sample in samples:
        rank = _rank_of(sample) if sample.scored else None
        if rank is None:
            continue
        ranks.setdefault(sample.measure, []).append(rank)
        ties[sample.measure] = ties.get(sample.measure, 0) + bool(sample.tie)
    out: dict[str, RankingMetrics] = {}
    for measure, values in ranks.items():
        n = len(values)
        out[measure] = RankingMetrics(
            n=n,
            hr_at_1=sum(r <= 1 for r in values) / n,
            hr_at_3=sum(r <= 3 for r in values) / n,
            ndcg_at_10=sum(1 / math.log2(r + 1) for r in values if r <= 10) / n,
            ties=ties[measure],
        )
    return out
