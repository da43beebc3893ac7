"""``negatives="matched"``: every hit@1 negative comes from the positive's popularity bin.

Re-derived with a loop over the interactions (no builder code): each entity's
rank by interaction count (ties by id as a string), cut into
``min(POPULARITY_BINS, n // BIN_MIN_SIZE)`` equal-count bins; a negative's bin is the positive's.
"""

from __future__ import annotations

from collections import Counter

from helpers.lrworld.checks import build, config
from helpers.lrworld.datasets import make_movie_dataset
from recworld.lrworld.builders.base import BIN_MIN_SIZE, POPULARITY_BINS


def bins(counts: Counter[str]) -> dict[str, int]:
    order = sorted(counts, key=lambda k: (counts[k], k))
    n_bins = max(1, min(POPULARITY_BINS, len(order) // BIN_MIN_SIZE))
    return {k: i * n_bins // len(order) for i, k in enumerate(order)}


def test_matched_negatives_share_the_positive_bin() -> None:
    dataset = make_movie_dataset(n_users=90, n_items=120, seed=3)
    measures = ("assoc_rule", "mem_item_item", "mem_user_user")
    cfg = config(negatives="matched", measures=measures, per_measure=40)
    _, built = build(dataset, cfg)
    inter = dataset.interactions
    item_bins = bins(Counter(inter["item_id"].astype(str)))
    user_bins = bins(Counter(inter["user_id"].astype(str)))
    checked = 0
    for measure, qs in built.items():
        table = user_bins if measure == "mem_user_user" else item_bins
        for q in qs:
            for i, c in enumerate(q.candidates):
                if i != q.answer_index:
                    assert table[c.id] == table[q.answer.id], (measure, q.id)
                    checked += 1
    assert checked > 500
