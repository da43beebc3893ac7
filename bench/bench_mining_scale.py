"""Every miner on a synthetic matrix the size of ML-25M: wall time and peak memory per stage.

162,541 users x 62,423 items, about 25M interactions; item popularity follows a
power law and user activity a log-normal (both shaped like MovieLens). Stages:
matrix build, pair rules (min support/confidence 0.01), item-item top-k for all
items, user-user top-k for a sample of target users (a suite build only needs
its targets' neighbours), and one NeuMF run under its default sample budget.
Peak RSS per stage comes from Linux's VmHWM, reset between stages.

    .venv/bin/python bench/bench_mining_scale.py [--users N --items N --interactions N]
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recworld.mining import InteractionMatrix, NeuMFConfig, cosine_topk, mine_pair_rules, train_neumf

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _reset_peak() -> None:
    # Not Linux, or not allowed: the peaks then accumulate across stages.
    with contextlib.suppress(OSError):
        _CLEAR_REFS.write_text("5")


def _peak_gib() -> float:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _stage(name: str, fn: Callable[[], Any], rows: list[tuple[str, float, float]]) -> Any:
    _reset_peak()
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    peak = _peak_gib()
    rows.append((name, seconds, peak))
    print(f"{name:<28} {seconds:8.1f} s   peak RSS {peak:5.2f} GiB", flush=True)
    return result


def synthetic(n_users: int, n_items: int, n_interactions: int, seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    activity = gen.lognormal(mean=0.0, sigma=1.0, size=n_users)
    degree = np.maximum(20, np.round(activity / activity.sum() * n_interactions)).astype(np.int64)
    degree = np.minimum(degree, n_items // 2)
    popularity = 1.0 / (np.arange(n_items) + 10.0) ** 1.1
    popularity /= popularity.sum()
    items = gen.choice(n_items, size=int(degree.sum()), p=popularity)
    users = np.repeat(np.arange(n_users), degree)
    return pd.DataFrame({"user_id": users, "item_id": gen.permutation(n_items)[items]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=162_541)
    parser.add_argument("--items", type=int, default=62_423)
    parser.add_argument("--interactions", type=int, default=25_000_095)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--user-rows", type=int, default=2_000)
    parser.add_argument("--item-rows", type=int, default=2_000, help="0 = every item")
    args = parser.parse_args()

    rows: list[tuple[str, float, float]] = []
    frame = _stage("generate (not ours)", lambda: synthetic(args.users, args.items, args.interactions), rows)
    m = _stage("InteractionMatrix", lambda: InteractionMatrix.from_interactions(frame), rows)
    frame = pd.DataFrame()  # free the 25M-row frame before the miners run
    print(f"  {m.n_users} users x {m.n_items} items, {m.matrix.nnz} distinct interactions")
    rules = _stage("mine_pair_rules(0.01, 0.01)", lambda: mine_pair_rules(m), rows)
    print(f"  {len(rules)} rules")
    item_vectors = m.matrix.T.tocsr()
    gen = np.random.default_rng(1)
    item_rows = None if args.item_rows == 0 else gen.choice(m.n_items, args.item_rows, replace=False)
    label = "all" if item_rows is None else str(args.item_rows)
    _stage(
        f"item-item top-{args.k} ({label})", lambda: cosine_topk(item_vectors, args.k, rows=item_rows), rows
    )
    user_rows = gen.choice(m.n_users, args.user_rows, replace=False)
    _stage(
        f"user-user top-{args.k} ({args.user_rows})",
        lambda: cosine_topk(m.matrix, args.k, rows=user_rows),
        rows,
    )
    config = NeuMFConfig()
    embeddings = _stage("train_neumf (defaults)", lambda: train_neumf(m, config, seed=0), rows)
    info = embeddings.info
    print(
        f"  loss/epoch {[round(x, 4) for x in info['loss_per_epoch']]}; HR@10 model {info['hr@10']:.3f}, "
        f"embedding {info['hr@10_embedding']:.3f}, popularity {info['hr@10_popularity']:.3f}"
    )
    ours = [r for r in rows if not r[0].startswith("generate")]
    total = sum(r[1] for r in ours)
    print(f"total (without generation) {total:.1f} s; max stage peak RSS {max(r[2] for r in ours):.2f} GiB")


if __name__ == "__main__":
    main()
