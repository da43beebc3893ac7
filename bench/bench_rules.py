"""Pair rules on ML-100K: recworld.mining.mine_pair_rules vs mlxtend apriori(max_len=2) + association_rules.

Both run side by side in one process on the same transactions; the script
asserts that they find the same pairs with the same supports and prints the
median times and the speed ratio.

    .venv/bin/python bench/bench_rules.py [--repeats 5] [--min-support 0.02] [--inter PATH]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recworld.mining import InteractionMatrix, RuleTable, mine_pair_rules


def _median_seconds(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _mlxtend(onehot: pd.DataFrame, min_support: float, min_confidence: float) -> pd.DataFrame:
    from mlxtend.frequent_patterns import apriori, association_rules

    frequent = apriori(onehot, min_support=min_support, max_len=2, use_colnames=False)
    return association_rules(
        frequent, num_itemsets=len(onehot), metric="confidence", min_threshold=min_confidence
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inter", type=Path, default=None, help="ml-100k.inter (default: fetched)")
    parser.add_argument("--min-support", type=float, default=0.02)
    parser.add_argument("--min-confidence", type=float, default=0.01)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    if args.inter is None:
        from recworld.data.fetch import fetch

        args.inter = fetch("ml-100k").path / "raw" / "ml-100k.inter"
    frame = pd.read_csv(args.inter, sep="\t")
    frame.columns = [c.split(":")[0] for c in frame.columns]
    m = InteractionMatrix.from_interactions(frame)
    onehot = pd.DataFrame(m.matrix.toarray() > 0)
    print(f"ML-100K: {m.n_users} users x {m.n_items} items, {m.matrix.nnz} interactions")

    ours_s, ours = _median_seconds(
        lambda: mine_pair_rules(m, args.min_support, args.min_confidence), args.repeats
    )
    theirs_s, theirs = _median_seconds(
        lambda: _mlxtend(onehot, args.min_support, args.min_confidence), args.repeats
    )
    assert isinstance(ours, RuleTable)
    ours_pairs = {
        (int(a), int(c)): float(s)
        for a, c, s in zip(ours.antecedent, ours.consequent, ours.support, strict=True)
    }
    theirs_pairs = {
        (next(iter(a)), next(iter(c))): float(s)
        for a, c, s in zip(theirs["antecedents"], theirs["consequents"], theirs["support"], strict=True)
    }
    assert ours_pairs.keys() == theirs_pairs.keys(), "different rule sets"
    keys = sorted(ours_pairs)
    np.testing.assert_array_equal([ours_pairs[k] for k in keys], [theirs_pairs[k] for k in keys])
    print(
        f"min_support={args.min_support} min_confidence={args.min_confidence}: {len(ours)} rules, identical"
    )
    print(f"recworld  median {ours_s * 1000:9.1f} ms over {args.repeats} runs")
    print(f"mlxtend   median {theirs_s * 1000:9.1f} ms over {args.repeats} runs")
    print(f"speed ratio (mlxtend / recworld): {theirs_s / ours_s:.1f}x")


if __name__ == "__main__":
    main()
