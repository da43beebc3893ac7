"""The numbers of a LUNAR report cell: a mean with an interval that is honest at small n, or a share.

* A judge's scores are integers 1–5 (PC, PD, privacy; Avg in halves). Their mean
  gets the smoothed Bayesian bootstrap of :func:`recworld.stats.stratified_interval`
  on the 1–5 range: half a pseudo-observation at each end, so five answers that
  all scored 5 give an interval below 5, never ``[5.00, 5.00]``.
* Below :data:`MIN_N` scored answers a cell shows its mean and n and says
  "n too small" instead of an interval (the rule LRWorld's report uses,
  :data:`recworld.scoring.thresholds.MIN_INTERVAL_N`): an interval over three
  answers compares with nothing.
* A share (answers with a privacy offence) gets the exact Clopper-Pearson
  interval, which is valid at every n, 0/1 and 1/1 included.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recworld.records import FrozenRecord
from recworld.scoring.thresholds import MIN_INTERVAL_N
from recworld.seeding import rng
from recworld.stats import clopper_pearson, stratified_interval

__all__ = ["MIN_N", "RESAMPLES", "SCALE", "TOO_SMALL", "MetricCell", "Share", "mean_cell", "share"]

MIN_N = MIN_INTERVAL_N
SCALE = (1.0, 5.0)  # the judges' score range
RESAMPLES = 4000
TOO_SMALL = "n too small"


class MetricCell(FrozenRecord):
    """A mean over scored answers and its 95% interval (None below :data:`MIN_N` or when nothing scored)."""

    mean: float | None
    low: float | None
    high: float | None
    n: int = 0

    def text(self) -> str:
        """``3.42 [3.10, 3.71]``; ``3.00 (n=1, n too small)``; ``–`` when nothing was scored."""
        if self.mean is None:
            return "–"
        if self.low is None or self.high is None:
            return f"{self.mean:.2f} (n={self.n}, {TOO_SMALL})"
        return f"{self.mean:.2f} [{self.low:.2f}, {self.high:.2f}]"


def mean_cell(values: Sequence[float], seed: int, *keys: str | int) -> MetricCell:
    """The mean of 1–5 scores with its interval, drawn from ``rng(seed, *keys)`` (deterministic per cell)."""
    if not values:
        return MetricCell(mean=None, low=None, high=None, n=0)
    mean = float(np.mean(values))
    if len(values) < MIN_N:
        return MetricCell(mean=mean, low=None, high=None, n=len(values))
    found = stratified_interval([values], rng(seed, "lunar", "interval", *keys), RESAMPLES, bounds=SCALE)
    low, high = found if found is not None else (None, None)
    return MetricCell(mean=mean, low=low, high=high, n=len(values))


class Share(FrozenRecord):
    """``k`` of ``n`` with its exact 95% interval (None when ``n`` is 0)."""

    k: int
    n: int
    low: float | None
    high: float | None

    def text(self) -> str:
        """``2/5 (40%) [5%, 85%]``; ``–`` when there is nothing to count."""
        if not self.n or self.low is None or self.high is None:
            return "–"
        return f"{self.k}/{self.n} ({self.k / self.n:.0%}) [{self.low:.0%}, {self.high:.0%}]"


def share(k: int, n: int) -> Share:
    if n == 0:
        return Share(k=0, n=0, low=None, high=None)
    low, high = clopper_pearson(k, n)
    return Share(k=k, n=n, low=low, high=high)
