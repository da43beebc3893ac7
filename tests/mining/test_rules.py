from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import pytest

from helpers.mining import random_interactions
from recworld.errors import ConfigError
from recworld.mining import InteractionMatrix, RuleTable, mine_pair_rules
from recworld.mining.rules import cooccurrence


def _brute_force(
    m: InteractionMatrix, min_support: float, min_confidence: float
) -> dict[tuple[int, int], tuple]:
    """Pure-python itemset counting over transactions."""
    dense = m.matrix.toarray() > 0
    transactions = [set(np.flatnonzero(row).tolist()) for row in dense]
    n = len(transactions)
    single: dict[int, int] = {}
    for t in transactions:
        for item in t:
            single[item] = single.get(item, 0) + 1
    rules = {}
    for a, c in permutations(range(dense.shape[1]), 2):
        both = sum(1 for t in transactions if a in t and c in t)
        if both == 0 or both / n < min_support or single[a] / n < min_support:
            continue
        conf = both / single[a]
        if conf >= min_confidence:
            rules[(a, c)] = (both / n, conf, conf / (single[c] / n))
    return rules


@pytest.mark.parametrize("method", ["auto", "sparse", "dense"])
@pytest.mark.parametrize(("min_support", "min_confidence"), [(0.01, 0.01), (0.05, 0.3), (0.06, 0.25)])
def test_rules_match_brute_force(
    small_matrix: InteractionMatrix, min_support: float, min_confidence: float, method: str
) -> None:
    table = mine_pair_rules(small_matrix, min_support, min_confidence, method=method)
    expected = _brute_force(small_matrix, min_support, min_confidence)
    assert len(expected) > 0
    got = {
        (int(a), int(c)): (s, f, lift)
        for a, c, s, f, lift in zip(
            table.antecedent, table.consequent, table.support, table.confidence, table.lift, strict=True
        )
    }
    assert got.keys() == expected.keys()
    for pair, values in expected.items():
        np.testing.assert_allclose(got[pair], values, rtol=1e-12)


def test_rule_order_is_antecedent_then_confidence_desc_then_consequent(
    small_matrix: InteractionMatrix,
) -> None:
    table = mine_pair_rules(small_matrix, 0.02, 0.05)
    keys = list(zip(table.antecedent, -table.confidence, table.consequent, strict=True))
    assert keys == sorted(keys)
    assert table.antecedent.dtype == np.int64 and table.support.dtype == np.float64


def test_matches_mlxtend() -> None:
    from mlxtend.frequent_patterns import apriori, association_rules

    m = InteractionMatrix.from_interactions(random_interactions(7, n_users=60, n_items=30, density=0.25))
    onehot = pd.DataFrame(m.matrix.toarray() > 0)
    frequent = apriori(onehot, min_support=0.05, max_len=2, use_colnames=False)
    rules = association_rules(frequent, num_itemsets=len(onehot), metric="confidence", min_threshold=0.2)
    theirs = {
        (next(iter(a)), next(iter(c))): (s, f, lift)
        for a, c, s, f, lift in zip(
            rules["antecedents"],
            rules["consequents"],
            rules["support"],
            rules["confidence"],
            rules["lift"],
            strict=True,
        )
    }
    table = mine_pair_rules(m, 0.05, 0.2)
    ours = {
        (int(a), int(c)): (s, f, lift)
        for a, c, s, f, lift in zip(
            table.antecedent, table.consequent, table.support, table.confidence, table.lift, strict=True
        )
    }
    assert len(theirs) > 10
    assert ours.keys() == theirs.keys()
    for pair, values in theirs.items():
        np.testing.assert_allclose(ours[pair], values, rtol=1e-12)


def test_cooccurrence_paths_agree(small_matrix: InteractionMatrix) -> None:
    dense = small_matrix.matrix.toarray()
    expected = (dense.T @ dense).astype(np.int64)
    for method in ("sparse", "dense"):
        np.testing.assert_array_equal(cooccurrence(small_matrix.matrix, method=method).toarray(), expected)


def test_too_few_frequent_items_gives_empty_table(small_matrix: InteractionMatrix) -> None:
    assert len(mine_pair_rules(small_matrix, 1.0, 0.5)) == 0


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5])
def test_thresholds_are_checked(small_matrix: InteractionMatrix, bad: float) -> None:
    with pytest.raises(ConfigError, match="min_support"):
        mine_pair_rules(small_matrix, bad, 0.1)
    with pytest.raises(ConfigError, match="min_confidence"):
        mine_pair_rules(small_matrix, 0.1, bad)


def test_lift_order_ranks_each_antecedents_rules_by_lift() -> None:
    m = InteractionMatrix.from_interactions(random_interactions(seed=4, n_users=80, n_items=25))
    by_conf = mine_pair_rules(m, 0.02, 0.05)
    by_lift = mine_pair_rules(m, 0.02, 0.05, order_by="lift")
    # The same rules, only ordered differently.

    def key(t: RuleTable) -> list[tuple[int, int, float]]:
        return sorted(
            zip(t.antecedent.tolist(), t.consequent.tolist(), t.lift.round(12).tolist(), strict=True)
        )

    assert key(by_conf) == key(by_lift)
    supp_c = np.asarray(m.matrix.sum(axis=0)).ravel() / m.matrix.shape[0]
    np.testing.assert_allclose(by_lift.lift, by_lift.confidence / supp_c[by_lift.consequent])
    differs = False
    for a in np.unique(by_lift.antecedent):
        rows = by_lift.antecedent == a
        lifts = by_lift.lift[rows]
        assert np.all(np.diff(lifts) <= 1e-12), "lift descending within an antecedent"
        differs |= by_lift.consequent[rows][0] != by_conf.consequent[by_conf.antecedent == a][0]
    assert differs, "on this data lift picks another top consequent than confidence somewhere"
    with pytest.raises(ConfigError):
        mine_pair_rules(m, 0.02, 0.05, order_by="support")
