"""Interval and test primitives any layer may use: exact binomial intervals, paired tests, and a
bootstrap that cannot collapse to zero width.

Every score RecWorld reports is a proportion (a hit rate) or a mean of
proportions, often over few questions. The percentile bootstrap of a
proportion degenerates at 0 and 1 (0/20 resamples to 0/20 every time, so its
interval is ``[0, 0]``), and a bootstrap "significant" difference on one
question is no evidence at all. The primitives here are the standard remedies:

- :func:`clopper_pearson`: the exact binomial interval (Clopper & Pearson 1934),
  guaranteed coverage at every n; 0/20 gives [0, 0.168].
- :func:`wilson`: the Wilson score interval (Wilson 1927), close to nominal
  coverage on average and never outside [0, 1] (Brown, Cai & DasGupta 2001).
- :func:`smoothed_bootstrap`: a Bayesian bootstrap (Rubin 1981) with half a
  pseudo-observation at each end of the value range. For 0/1 data each
  replicate is a draw from Beta(k + 1/2, n - k + 1/2), the Jeffreys posterior,
  so its width is never zero; for other bounded values (a question's mean over
  option orders, a paired difference in {-1, 0, 1}) it smooths the same way.
- :func:`stratified_interval`: the interval of an equal-weight mean over strata
  (a macro average over measures). For 0/1 strata it is a stratified
  Clopper-Pearson interval by Monte Carlo: the lower bound is the alpha/2
  quantile of the mean of independent Beta(k, n - k + 1) draws, the upper the
  1 - alpha/2 quantile of the mean of Beta(k + 1, n - k) draws (the binomial
  analogue of Fay & Feuer's 1997 gamma interval for directly standardised
  rates); with one stratum it is Clopper-Pearson itself. Other strata (means
  over option orders, paired differences) use the smoothed bootstrap.
- :func:`mcnemar_exact`: the exact McNemar test on discordant pairs (McNemar 1947),
  the paired test of two classifiers on the same questions.
- :func:`sign_flip_test`: its stratified generalisation for a macro difference
  (a randomisation test that swaps the two answers of a question at random).
- :func:`binomial_upper_tail`: P(X >= k) for X ~ Binomial(n, p).

Only numpy is imported at module load; scipy's special functions are loaded
by the two functions that need them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "CONFIDENCE",
    "N_RESAMPLES",
    "binomial_upper_tail",
    "clopper_pearson",
    "mcnemar_exact",
    "percentile_interval",
    "sign_flip_test",
    "smoothed_bootstrap",
    "stratified_interval",
    "wilson",
]

CONFIDENCE = 0.95
# Resamples of every bootstrap interval the report prints (a macro average, a paired difference).
N_RESAMPLES = 1000
# Half a pseudo-observation at each bound: the Jeffreys prior Beta(1/2, 1/2) for 0/1 values.
PSEUDO = 0.5


def _check(k: float, n: float, confidence: float) -> None:
    if not n > 0:
        raise ValueError(f"an interval needs n > 0, got n = {n}")
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k = {k}, n = {n}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")


def clopper_pearson(k: float, n: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for ``k`` successes in ``n`` trials.

    The bounds are beta quantiles: ``B(alpha/2; k, n-k+1)`` and
    ``B(1-alpha/2; k+1, n-k)``, with 0 at ``k = 0`` and 1 at ``k = n``. A
    non-integer ``k``/``n`` (an effective sample size) is accepted, as Korn &
    Graubard (1998) use it.
    """
    from scipy.special import betaincinv

    _check(k, n, confidence)
    alpha = 1.0 - confidence
    low = 0.0 if k <= 0 else float(betaincinv(k, n - k + 1, alpha / 2))
    high = 1.0 if k >= n else float(betaincinv(k + 1, n - k, 1 - alpha / 2))
    return low, high


def wilson(k: float, n: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval for ``k`` successes in ``n`` trials (never outside [0, 1])."""
    from statistics import NormalDist

    _check(k, n, confidence)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def binomial_upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p): the one-sided exact binomial p-value."""
    from scipy.special import betainc

    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0:
        return 0.0
    if p >= 1:
        return 1.0
    # P(X >= k) is the regularised incomplete beta I_p(k, n - k + 1).
    return float(betainc(k, n - k + 1, p))


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs.

    Under the null each discordant question is equally likely to favour either
    model, so ``min(b, c)`` is Binomial(b + c, 1/2); the p-value doubles its
    lower tail (capped at 1). Computed in exact integer arithmetic. No
    discordant pair gives 1.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got {b}, {c}")
    total = b + c
    if total == 0:
        return 1.0
    from math import comb

    tail = sum(comb(total, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / (1 << total))


def smoothed_bootstrap(
    values: ArrayLike,
    rng: np.random.Generator,
    n_resamples: int,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> NDArray[np.float64]:
    """Replicates of the mean of ``values`` (within ``bounds``) from a smoothed Bayesian bootstrap.

    Each replicate reweights the observed values with Dirichlet weights
    (Rubin's Bayesian bootstrap) after adding :data:`PSEUDO` observations at
    each bound. Values that repeat are drawn as one level with the summed
    weight (a Dirichlet aggregates that way), so the cost is
    O(resamples x distinct values). For 0/1 values a replicate is exactly a
    Beta(k + 1/2, n - k + 1/2) draw. Empty input: every replicate is nan.
    """
    data = np.asarray(values, dtype=np.float64).ravel()
    low, high = bounds
    if data.size == 0:
        return np.full(n_resamples, np.nan)
    if np.any(data < low) or np.any(data > high):
        raise ValueError(f"values must lie within {bounds}")
    levels, counts = np.unique(np.concatenate([data, [low, high]]), return_counts=True)
    alpha = counts.astype(np.float64)
    # The two bound points were appended once each; they count PSEUDO, not 1.
    alpha[levels == low] -= 1.0 - PSEUDO
    alpha[levels == high] -= 1.0 - PSEUDO
    gamma = rng.gamma(alpha, size=(n_resamples, levels.size))
    weights = gamma / gamma.sum(axis=1, keepdims=True)
    return np.asarray(weights @ levels, dtype=np.float64)


def percentile_interval(replicates: ArrayLike, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The central ``confidence`` percentile interval of replicates (None when all are nan)."""
    reps = np.asarray(replicates, dtype=np.float64)
    reps = reps[~np.isnan(reps)]
    if reps.size == 0:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(reps, [tail, 100.0 - tail])
    return float(low), float(high)


def _binary(values: NDArray[np.float64]) -> bool:
    return bool(np.all((values == 0.0) | (values == 1.0)))


def _beta_mixture(
    strata: Sequence[NDArray[np.float64]], rng: np.random.Generator, n_draws: int, confidence: float
) -> tuple[float, float]:
    """The stratified Clopper-Pearson interval of an equal-weight mean of 0/1 strata, by Monte Carlo."""
    alpha = 1.0 - confidence
    lows, highs = [], []
    for values in strata:
        n, k = values.size, float(values.sum())
        lows.append(np.zeros(n_draws) if k == 0 else rng.beta(k, n - k + 1, n_draws))
        highs.append(np.ones(n_draws) if k == n else rng.beta(k + 1, n - k, n_draws))
    low = float(np.quantile(np.mean(lows, axis=0), alpha / 2))
    high = float(np.quantile(np.mean(highs, axis=0), 1 - alpha / 2))
    return low, high


def stratified_interval(
    strata: Sequence[ArrayLike],
    rng: np.random.Generator,
    n_resamples: int,
    *,
    confidence: float = CONFIDENCE,
    bounds: tuple[float, float] = (0.0, 1.0),
) -> tuple[float, float] | None:
    """Interval of the equal-weight mean of the strata means (a macro average), never of zero width.

    Each stratum is drawn on its own and a replicate of the macro average is
    the mean of the strata's draws. 0/1 strata (hits) give the stratified
    Clopper-Pearson interval (see the module docstring): conservative like
    Clopper-Pearson, and equal to it for one stratum. Other values use
    :func:`smoothed_bootstrap`; when every value of every stratum sits at a
    bound, that end of the interval is the bound itself (the boundary rule of
    Brown, Cai & DasGupta for the Jeffreys interval). Empty strata are
    ignored; None when all are empty.
    """
    arrays = [np.asarray(s, dtype=np.float64).ravel() for s in strata]
    arrays = [a for a in arrays if a.size]
    if not arrays:
        return None
    if bounds == (0.0, 1.0) and all(_binary(a) for a in arrays):
        return _beta_mixture(arrays, rng, n_resamples, confidence)
    reps = np.mean([smoothed_bootstrap(a, rng, n_resamples, bounds) for a in arrays], axis=0)
    interval = percentile_interval(reps, confidence)
    if interval is None:
        return None
    low, high = interval
    if all(np.all(a == bounds[0]) for a in arrays):
        low = bounds[0]
    if all(np.all(a == bounds[1]) for a in arrays):
        high = bounds[1]
    return low, high


def sign_flip_test(
    discordant: Sequence[tuple[int, int, int]],
    rng: np.random.Generator,
    n_draws: int = 20_000,
) -> float:
    """Two-sided p-value of a macro-averaged paired difference, by random sign flips.

    ``discordant`` holds, per stratum (measure), ``(b, c, n)``: questions only
    the first model got right, only the second got right, and the stratum's
    shared questions. The statistic is the mean over strata of ``(b - c) / n``.
    Under the null each discordant question favours either model with
    probability 1/2, independently; the p-value is the share of null draws at
    least as extreme, counting the observed one (so it is never 0). For one
    stratum this is the Monte Carlo version of :func:`mcnemar_exact`.
    """
    if not discordant:
        return 1.0
    d = np.array([b + c for b, c, _ in discordant], dtype=np.int64)
    n = np.array([max(size, 1) for _, _, size in discordant], dtype=np.float64)
    observed = float(np.mean([(b - c) / max(size, 1) for b, c, size in discordant]))
    if not d.any():
        return 1.0
    wins = rng.binomial(d, 0.5, size=(n_draws, d.size))
    null = ((2 * wins - d) / n).mean(axis=1)
    extreme = int(np.sum(np.abs(null) >= abs(observed) - 1e-12))
    return (1 + extreme) / (1 + n_draws)
