"""The intervals score_samples and paired_comparison give at the edges: 0/20, 20/20, n = 1 and 5, orders."""

from __future__ import annotations

from typing import Any

import pytest
from scipy import stats as sps

from helpers.sample_records import sample
from recworld.scoring import paired_comparison, score_samples
from recworld.scoring.thresholds import MIN_PAIRED_N


def _run(measure: str, hits: list[bool], start: int = 0) -> list[dict[str, Any]]:
    n_options = 4 if measure.startswith("kg_") else 10
    out = []
    for i, hit in enumerate(hits):
        answer = i % n_options
        out.append(sample(measure, start + i, answer, answer if hit else (answer + 1) % n_options))
    return out


@pytest.mark.parametrize(("k", "n"), [(0, 20), (20, 20), (0, 1), (1, 1), (0, 5), (3, 5), (7, 20)])
def test_a_measure_has_the_exact_binomial_interval(k: int, n: int) -> None:
    m = score_samples(_run("kg_movie_genre", [True] * k + [False] * (n - k))).measures["kg_movie_genre"]
    exact = sps.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert (m.ci_low, m.ci_high) == pytest.approx((exact.low, exact.high), abs=1e-9)
    assert m.ci_low is not None and m.ci_high is not None and m.ci_high > m.ci_low  # never "± 0.000"


def test_zero_of_twenty_reaches_above_a_tenth() -> None:
    m = score_samples(_run("kg_movie_genre", [False] * 20)).measures["kg_movie_genre"]
    assert m.score == 0.0 and m.ci_low == 0.0 and m.ci_high is not None and m.ci_high > 0.1
    assert m.missed_ci == (0.0, pytest.approx(0.1684, abs=1e-4))  # no miss in 20: the same exact bound


def test_a_macro_average_never_collapses() -> None:
    samples = _run("kg_movie_genre", [False] * 20) + _run("kg_movie_cast", [False] * 20)
    samples += _run("mem_item_item", [False] * 5)
    metrics = score_samples(samples)
    overall = metrics.overall
    assert overall is not None and overall.score == 0.0
    assert overall.ci_low == 0.0 and overall.ci_high is not None and overall.ci_high > 0.02
    perfect = score_samples(_run("kg_movie_genre", [True] * 20) + _run("kg_movie_cast", [True] * 20)).overall
    assert (
        perfect is not None
        and perfect.ci_high == 1.0
        and perfect.ci_low is not None
        and perfect.ci_low < 0.98
    )


def test_a_group_of_one_measure_has_that_measures_interval() -> None:
    metrics = score_samples(
        _run("assoc_rule", [True] * 7 + [False] * 13) + _run("kg_movie_genre", [True] * 9)
    )
    measure, factor = metrics.measures["assoc_rule"], metrics.factors["association rules"]
    assert (factor.ci_low, factor.ci_high) == (measure.ci_low, measure.ci_high)


def _orders(hits: list[bool], orders: int) -> list[dict[str, Any]]:
    """Every question asked ``orders`` times, answered the same way each time."""
    out = []
    for i, hit in enumerate(hits):
        for o in range(orders):
            answer = (i + o) % 4
            qid = f"ml-100k/kg_movie_genre/{i:05d}" + (f"#o{o}" if o else "")
            out.append(
                sample(
                    "kg_movie_genre", i, answer, answer if hit else (answer + 1) % 4, question_id=qid, order=o
                )
            )
    return out


def test_five_orders_resample_questions_not_copies() -> None:
    hits = [i % 3 == 0 for i in range(30)]
    once = score_samples(_orders(hits, 1)).measures["kg_movie_genre"]
    five = score_samples(_orders(hits, 5)).measures["kg_movie_genre"]
    assert five.n == 150 and five.questions == 30 and once.questions == 30
    assert five.score == pytest.approx(once.score)
    assert once.ci_low is not None and once.ci_high is not None
    assert five.ci_low is not None and five.ci_high is not None
    # The five copies carry no more information than one: about the same width, not sqrt(5) narrower.
    assert five.ci_high - five.ci_low > 0.8 * (once.ci_high - once.ci_low)
    pooled = sps.binomtest(50, 150).proportion_ci(method="exact")  # what treating copies as questions gives
    assert five.ci_high - five.ci_low > 1.5 * (pooled.high - pooled.low)


def test_one_question_is_never_significant() -> None:
    a, b = _run("kg_movie_genre", [True]), _run("kg_movie_genre", [False])
    row = paired_comparison(b, a).measures["kg_movie_genre"]
    assert row.diff == -1.0 and row.p_value == 1.0 and not row.tested and not row.significant
    assert not paired_comparison(b, a).overall.significant


def test_paired_significance_needs_the_minimum_n() -> None:
    # Six discordant questions out of six: McNemar p = 0.03, but six questions are under the minimum.
    a, b = _run("kg_movie_genre", [True] * 6), _run("kg_movie_genre", [False] * 6)
    row = paired_comparison(a, b).measures["kg_movie_genre"]
    assert row.p_value is not None and row.p_value < 0.05 and not row.significant
    n = MIN_PAIRED_N
    a, b = _run("kg_movie_genre", [True] * n), _run("kg_movie_genre", [True] * (n - 8) + [False] * 8)
    row = paired_comparison(a, b).measures["kg_movie_genre"]
    assert (row.wins_a, row.wins_b) == (8, 0) and row.tested and row.significant
    assert row.p_value == pytest.approx(sps.binomtest(0, 8, 0.5).pvalue)


def test_the_macro_difference_is_tested_on_every_measure() -> None:
    strong = _run("kg_movie_genre", [True] * 40) + _run("kg_movie_cast", [True] * 40)
    weak = _run("kg_movie_genre", [False] * 40) + _run("kg_movie_cast", [True] * 30 + [False] * 10)
    cmp = paired_comparison(strong, weak)
    assert cmp.overall.diff == pytest.approx((1.0 + 0.25) / 2)
    assert cmp.overall.n_min == 40 and cmp.overall.p_value is not None and cmp.overall.p_value < 0.001
    assert cmp.overall.significant
    small = paired_comparison(
        strong + _run("mem_item_item", [True] * 3), weak + _run("mem_item_item", [False] * 3)
    )
    assert small.overall.n_min == 3 and not small.overall.tested  # one measure under the minimum
