"""Percentile bootstrap intervals, vectorised.

Scores here are means of per-question values with few distinct levels
(0/1 for a hit, -1/0/1 for a paired difference). Drawing n questions with
replacement then only matters through how many of each level were drawn, which
is a multinomial draw. :func:`bootstrap_means` uses that shortcut: it is the
same distribution as resampling indices, costs O(resamples × levels) instead
of O(resamples × n), and falls back to index resampling (in chunks) for values
with many levels.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

N_RESAMPLES = 1000
CONFIDENCE = 0.95
_MAX_LEVELS = 16
_CHUNK_CELLS = 4_000_000

__all__ = ["CONFIDENCE", "N_RESAMPLES", "bootstrap_ci", "bootstrap_means", "percentile_ci"]


def bootstrap_means(
    values: ArrayLike, rng: np.random.Generator, n_resamples: int = N_RESAMPLES
) -> NDArray[np.float64]:
    """Means of ``n_resamples`` bootstrap resamples of ``values`` (empty input: all nan)."""
    data = np.asarray(values, dtype=np.float64).ravel()
    n = data.size
    if n == 0:
        return np.full(n_resamples, np.nan)
    levels, counts = np.unique(data, return_counts=True)
    if levels.size <= _MAX_LEVELS:
        drawn = rng.multinomial(n, counts / n, size=n_resamples)
        return np.asarray(drawn @ levels / n, dtype=np.float64)
    out = np.empty(n_resamples, dtype=np.float64)
    rows = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = data[idx].mean(axis=1)
    return out


def percentile_ci(replicates: ArrayLike, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The central ``confidence`` percentile interval of bootstrap replicates."""
    reps = np.asarray(replicates, dtype=np.float64)
    reps = reps[~np.isnan(reps)]
    if reps.size == 0:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(reps, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_ci(
    values: Sequence[float] | ArrayLike,
    rng: np.random.Generator,
    *,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values`` (``None`` when empty)."""
    return percentile_ci(bootstrap_means(values, rng, n_resamples), confidence)
