"""recworld.stats against scipy and against brute force written from the definitions."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from scipy import stats as sps

from recworld.stats import (
    binomial_upper_tail,
    clopper_pearson,
    mcnemar_exact,
    percentile_interval,
    sign_flip_test,
    smoothed_bootstrap,
    stratified_interval,
    wilson,
)

GRID = [(0, 1), (1, 1), (0, 5), (2, 5), (5, 5), (0, 20), (1, 20), (20, 20), (7, 13), (40, 100), (0, 1000)]


def _cdf(k: int, n: int, p: float) -> float:
    return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def _bisect(f: object, lo: float = 0.0, hi: float = 1.0) -> float:
    """The root of a decreasing ``f`` on [lo, hi]."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid) > 0:  # type: ignore[operator]
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@pytest.mark.parametrize(("k", "n"), GRID)
def test_clopper_pearson_matches_scipy_and_the_definition(k: int, n: int) -> None:
    low, high = clopper_pearson(k, n)
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert (low, high) == pytest.approx((ref.low, ref.high), abs=1e-9)
    # The definition: the upper bound u has P(X <= k | u) = 2.5%, the lower l has P(X >= k | l) = 2.5%.
    if k < n <= 100:
        assert high == pytest.approx(_bisect(lambda u: _cdf(k, n, u) - 0.025), abs=1e-7)
    if k > 0 and n <= 100:
        assert low == pytest.approx(_bisect(lambda p: 0.025 - (1 - _cdf(k - 1, n, p)), 0, 1), abs=1e-7)


def test_zero_of_twenty_is_not_certain() -> None:
    low, high = clopper_pearson(0, 20)
    assert low == 0.0 and high == pytest.approx(0.1684, abs=1e-4)  # 1 - 0.025 ** (1 / 20)
    assert high == pytest.approx(1 - 0.025 ** (1 / 20))
    low, high = clopper_pearson(20, 20)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / 20))
    assert clopper_pearson(0, 1) == pytest.approx((0.0, 0.975))


@pytest.mark.parametrize(("k", "n"), GRID)
def test_wilson_matches_scipy_and_the_closed_form(k: int, n: int) -> None:
    low, high = wilson(k, n)
    ref = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert (low, high) == pytest.approx((ref.low, ref.high), abs=1e-9)
    z = sps.norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (low, high) == pytest.approx((max(0, centre - half), min(1, centre + half)), abs=1e-12)
    assert 0.0 <= low < high <= 1.0


def test_bad_counts_are_errors() -> None:
    for k, n in ((0, 0), (3, 2), (-1, 5)):
        with pytest.raises(ValueError):
            clopper_pearson(k, n)
        with pytest.raises(ValueError):
            wilson(k, n)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 1), (1, 0), (6, 0), (5, 1), (10, 3), (3, 10), (40, 55)])
def test_mcnemar_exact_matches_a_two_sided_binomial_test(b: int, c: int) -> None:
    p = mcnemar_exact(b, c)
    expected = 1.0 if b + c == 0 else sps.binomtest(min(b, c), b + c, 0.5).pvalue
    assert p == pytest.approx(expected, rel=1e-12)
    assert mcnemar_exact(c, b) == p


def test_mcnemar_cannot_be_significant_on_few_discordant_pairs() -> None:
    assert mcnemar_exact(0, 1) == 1.0  # the "-1.000 *" of one question
    assert mcnemar_exact(5, 0) == pytest.approx(0.0625)  # five in a row is not yet 5%
    assert mcnemar_exact(6, 0) < 0.05


@pytest.mark.parametrize(
    ("k", "n", "p"), [(0, 10, 0.3), (3, 10, 0.25), (10, 10, 0.25), (11, 10, 0.5), (7, 30, 0.1)]
)
def test_binomial_upper_tail_is_the_sum(k: int, n: int, p: float) -> None:
    brute = sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))
    assert binomial_upper_tail(k, n, p) == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize(("k", "n"), [(0, 20), (20, 20), (7, 13), (1, 1)])
def test_smoothed_bootstrap_of_binary_data_is_the_jeffreys_posterior(k: int, n: int) -> None:
    values = np.array([1.0] * k + [0.0] * (n - k))
    reps = smoothed_bootstrap(values, np.random.default_rng(0), 40_000)
    posterior = sps.beta(k + 0.5, n - k + 0.5)
    assert reps.mean() == pytest.approx(posterior.mean(), abs=0.004)
    assert np.quantile(reps, 0.975) == pytest.approx(posterior.ppf(0.975), abs=0.006)
    assert np.quantile(reps, 0.025) == pytest.approx(posterior.ppf(0.025), abs=0.006)
    assert reps.std() > 0  # never collapses


def test_smoothed_bootstrap_checks_its_range() -> None:
    with pytest.raises(ValueError):
        smoothed_bootstrap([0.0, 2.0], np.random.default_rng(0), 10)
    assert np.isnan(smoothed_bootstrap([], np.random.default_rng(0), 5)).all()
    assert percentile_interval(np.full(5, np.nan)) is None


@pytest.mark.parametrize(("k", "n"), [(0, 20), (7, 20), (20, 20), (1, 5)])
def test_one_binary_stratum_is_clopper_pearson(k: int, n: int) -> None:
    values = np.array([1.0] * k + [0.0] * (n - k))
    low, high = stratified_interval([values], np.random.default_rng(0), 200_000) or (0.0, 0.0)
    assert (low, high) == pytest.approx(clopper_pearson(k, n), abs=0.003)


def test_stratified_interval_never_has_zero_width() -> None:
    generator = np.random.default_rng(0)
    zeros = [np.zeros(20), np.zeros(5)]
    low, high = stratified_interval(zeros, generator, 2000) or (1.0, 0.0)
    assert low == 0.0 and 0.05 < high < 0.4  # a model that never scored: the interval starts at 0
    ones = [np.ones(20), np.ones(20)]
    low, high = stratified_interval(ones, generator, 2000) or (0.0, 0.0)
    assert high == 1.0 and 0.8 < low < 1.0
    mixed = stratified_interval([np.zeros(20), np.ones(20)], generator, 2000)
    assert mixed is not None and mixed[0] < 0.5 < mixed[1]
    diffs = stratified_interval([np.zeros(30)], generator, 2000, bounds=(-1.0, 1.0))
    assert diffs is not None and diffs[0] < 0 < diffs[1]
    assert stratified_interval([], generator, 10) is None


@pytest.mark.parametrize(
    ("sizes", "rates"), [((5, 5, 5), (0.0, 0.1, 0.25)), ((20, 50, 10), (0.05, 0.5, 0.9))]
)
def test_stratified_interval_covers_the_macro_average(
    sizes: tuple[int, ...], rates: tuple[float, ...]
) -> None:
    """Coverage of the true macro average, by simulation: at least nominal minus Monte Carlo slack."""
    truth = float(np.mean(rates))
    generator = np.random.default_rng(1)
    trials, covered = 400, 0
    for _ in range(trials):
        strata = [(generator.random(n) < p).astype(float) for n, p in zip(sizes, rates, strict=True)]
        low, high = stratified_interval(strata, generator, 1000) or (1.0, 0.0)
        covered += low <= truth <= high
    assert covered / trials >= 0.91


def test_sign_flip_test_is_mcnemar_for_one_stratum_and_uniform_under_the_null() -> None:
    generator = np.random.default_rng(2)
    for b, c in ((6, 0), (10, 3), (20, 20)):
        assert sign_flip_test([(b, c, 50)], generator, 50_000) == pytest.approx(mcnemar_exact(b, c), abs=0.01)
    assert sign_flip_test([(0, 0, 10)], generator) == 1.0
    assert sign_flip_test([], generator) == 1.0
    null = []
    for _ in range(300):
        strata = [(int(x), int(d - x), 40) for d, x in ((d, generator.binomial(d, 0.5)) for d in (8, 12, 3))]
        null.append(sign_flip_test(strata, generator, 2000))
    assert np.mean(np.array(null) < 0.05) < 0.08  # a valid test rejects about 5% of true nulls (or fewer)
