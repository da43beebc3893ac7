"""Coverage and width of the report's intervals, against the percentile bootstrap they replaced.

    python bench/bench_intervals.py [--trials 2000]

Prints, side by side in one run:

1. one measure (a proportion): the share of simulated runs whose 95% interval
   covers the true score, and the mean width, for the old percentile
   bootstrap, Clopper-Pearson (what a measure now reports) and Wilson;
2. a macro average over measures of different sizes and scores: the old
   stratified percentile bootstrap against the stratified smoothed bootstrap;
3. the degenerate-answering flag: how often it fires on a model that guesses
   uniformly, and on "always A".

Everything is seeded; the numbers in docs/report.md come from this script.
"""

from __future__ import annotations

import argparse

import numpy as np

from recworld.scoring.metrics import _bias_summary
from recworld.scoring.records import PositionCounts
from recworld.stats import clopper_pearson, percentile_interval, stratified_interval, wilson

RESAMPLES = 1000


def bootstrap_means(values: np.ndarray, rng: np.random.Generator, n_resamples: int) -> np.ndarray:
    """The old percentile bootstrap's replicates, the baseline this script compares against.

    For values with few levels (0/1 here) a resample matters only through how many of
    each level it drew: a multinomial draw, the same distribution as resampling indices.
    """
    levels, counts = np.unique(values, return_counts=True)
    drawn = rng.multinomial(values.size, counts / values.size, size=n_resamples)
    return np.asarray(drawn @ levels / values.size, dtype=np.float64)


def _percentile(values: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    return percentile_interval(bootstrap_means(values, rng, RESAMPLES)) or (0.0, 0.0)


def single(trials: int, rng: np.random.Generator) -> None:
    print("one measure: coverage / mean width of the 95% interval")
    print(f"{'n':>4} {'p':>5}  {'percentile boot.':>18}  {'Clopper-Pearson':>18}  {'Wilson':>18}")
    for n in (5, 20, 100):
        for p in (0.0, 0.05, 0.25, 0.5):
            hits = {"boot": [0, 0.0], "cp": [0, 0.0], "wilson": [0, 0.0]}
            for _ in range(trials):
                values = (rng.random(n) < p).astype(float)
                k = int(values.sum())
                for name, (low, high) in (
                    ("boot", _percentile(values, rng)),
                    ("cp", clopper_pearson(k, n)),
                    ("wilson", wilson(k, n)),
                ):
                    hits[name][0] += low <= p <= high
                    hits[name][1] += high - low
            cells = [
                f"{hits[k][0] / trials:6.3f} / {hits[k][1] / trials:5.3f}" for k in ("boot", "cp", "wilson")
            ]
            print(f"{n:>4} {p:>5.2f}  " + "  ".join(f"{c:>18}" for c in cells))


def macro(trials: int, rng: np.random.Generator) -> None:
    print("\nmacro average over measures: coverage / mean width")
    print(f"{'sizes':>14} {'scores':>20}  {'percentile boot.':>18}  {'stratified (now)':>18}")
    for sizes, rates in (
        ((5, 5, 5), (0.0, 0.0, 0.1)),
        ((20, 20, 20), (0.0, 0.05, 0.25)),
        ((200, 20, 5), (0.5, 0.1, 0.0)),
        ((100, 100, 100), (0.3, 0.5, 0.7)),
    ):
        truth = float(np.mean(rates))
        old, new = [0, 0.0], [0, 0.0]
        for _ in range(trials // 2):
            strata = [(rng.random(n) < p).astype(float) for n, p in zip(sizes, rates, strict=True)]
            reps = np.mean([bootstrap_means(s, rng, RESAMPLES) for s in strata], axis=0)
            low, high = percentile_interval(reps) or (0.0, 0.0)
            old[0] += low <= truth <= high
            old[1] += high - low
            low, high = stratified_interval(strata, rng, RESAMPLES) or (0.0, 0.0)
            new[0] += low <= truth <= high
            new[1] += high - low
        half = trials // 2
        print(
            f"{sizes!s:>14} {rates!s:>20}  {old[0] / half:6.3f} / {old[1] / half:5.3f}      "
            f"{new[0] / half:6.3f} / {new[1] / half:5.3f}"
        )


def paired_and_orders(trials: int, rng: np.random.Generator) -> None:
    print("\nsmoothed bootstrap: coverage of a paired difference, and of a mean over 5 option orders")
    for n, pa, pb, same in (
        (10, 0.9, 0.5, 0.0),
        (20, 0.5, 0.3, 0.3),
        (40, 0.2, 0.2, 0.5),
        (100, 0.6, 0.5, 0.5),
    ):
        covered = 0
        for _ in range(trials // 2):
            a = rng.random(n) < pa
            b = np.where(rng.random(n) < same, a, rng.random(n) < pb)  # a share of questions answered alike
            truth = pa - (same * pa + (1 - same) * pb)
            low, high = stratified_interval([a.astype(float) - b], rng, RESAMPLES, bounds=(-1.0, 1.0)) or (
                0,
                0,
            )
            covered += low <= truth <= high
        print(f"  paired  n={n:>3} p_a={pa:.1f} p_b={pb:.1f}: {covered / (trials // 2):.3f}")
    for n, p in ((10, 0.3), (30, 0.5), (30, 0.1)):
        truth = float(np.mean(np.clip(rng.normal(p, 0.2, size=400_000), 0, 1)))
        covered = 0
        for _ in range(trials // 2):
            q = np.clip(rng.normal(p, 0.2, size=n), 0, 1)  # each question's chance, the same in every order
            per_question = (rng.random((n, 5)) < q[:, None]).mean(axis=1)
            low, high = stratified_interval([per_question], rng, RESAMPLES) or (0, 0)
            covered += low <= truth <= high
        print(f"  orders  n={n:>3} questions x 5 orders, mean {p:.1f}: {covered / (trials // 2):.3f}")


def degenerate(trials: int, rng: np.random.Generator) -> None:
    print("\ndegenerate flag: share of runs flagged")
    print(f"{'options':>7} {'n':>4}  {'uniform guesser':>15}  {'always A':>9}")
    for k in (4, 10):
        for n in (5, 10, 20, 40):
            rates = []
            for always in (False, True):
                flagged = 0
                for _ in range(trials):
                    gold = np.bincount(rng.integers(k, size=n), minlength=k)
                    picks = np.zeros(n, dtype=int) if always else rng.integers(k, size=n)
                    parsed = np.bincount(picks, minlength=k)
                    counts = PositionCounts(gold=gold.tolist(), parsed=parsed.tolist(), hits=[0] * k)
                    flagged += _bias_summary([chr(65 + i) for i in range(k)], counts).degenerate
                rates.append(flagged / trials)
            print(f"{k:>7} {n:>4}  {rates[0]:>15.4f}  {rates[1]:>9.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    single(args.trials, rng)
    macro(args.trials, rng)
    paired_and_orders(args.trials, rng)
    degenerate(args.trials, rng)


if __name__ == "__main__":
    main()
