"""compute_metrics and the paired comparison, checked against hand counts and brute force."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers.sample_records import sample
from recworld.errors import DataError
from recworld.scoring import compute_metrics, load_samples, paired_comparison


def test_hand_counted_scores_and_misses() -> None:
    samples = [
        sample("kg_movie_genre", 0, 0, 0),
        sample("kg_movie_genre", 1, 1, 0),
        sample("kg_movie_genre", 2, 2, None),  # a miss is wrong
        sample("kg_movie_genre", 3, 3, 3),
        sample("mem_item_item", 0, 5, 5),
        sample("mem_item_item", 1, 9, None),
    ]
    m = compute_metrics(samples)
    genre = m["measures"]["kg_movie_genre"]
    assert (genre["n"], genre["correct"], genre["missed"]) == (4, 2, 1)
    assert genre["score"] == pytest.approx(0.5)
    assert genre["missed_rate"] == pytest.approx(0.25)
    assert genre["chance"] == pytest.approx(0.25)
    assert (genre["format"], genre["scale"], genre["factor"]) == (
        "mcq",
        "knowledgeability",
        "entity attribute",
    )
    item = m["measures"]["mem_item_item"]
    assert item["score"] == pytest.approx(0.5)
    assert item["chance"] == pytest.approx(0.10)
    assert item["scale"] == "personalization"
    assert m["schema"] == "recworld.metrics/3"
    assert (m["n"], m["correct"], m["missed"]) == (6, 3, 2)
    assert m["overall"]["score"] == pytest.approx(0.5)
    assert list(m["measures"]) == ["mem_item_item", "kg_movie_genre"]  # catalogue order


def test_position_histograms() -> None:
    answers = [0, 1, 2, 3, 0, 1, 2, 3]
    parsed = [0, 0, 0, 0, 0, 1, None, 3]
    samples = [
        sample("kg_movie_genre", i, a, p) for i, (a, p) in enumerate(zip(answers, parsed, strict=True))
    ]
    m = compute_metrics(samples)
    pos = m["measures"]["kg_movie_genre"]["positions"]
    assert pos["gold"] == [2, 2, 2, 2]
    assert pos["parsed"] == [5, 1, 0, 1]
    assert pos["hits"] == [2, 1, 0, 1]
    bias = m["positions"]["mcq"]
    assert bias["top_label"] == "A"
    assert bias["top_share"] == pytest.approx(5 / 7)
    expected_tv = 0.5 * sum(abs(p / 7 - 0.25) for p in [5, 1, 0, 1])
    assert bias["tv_distance"] == pytest.approx(expected_tv)


def test_factor_and_scale_macro_averages() -> None:
    samples = []
    # kg_movie_cast: 3/4, kg_movie_director: 1/2 (factor "entity relation"), kg_movie_genre: 0/2
    for i, (a, p) in enumerate([(0, 0), (1, 1), (2, 2), (3, 0)]):
        samples.append(sample("kg_movie_cast", i, a, p))
    for i, (a, p) in enumerate([(0, 0), (1, 2)]):
        samples.append(sample("kg_movie_director", i, a, p))
    for i, (a, p) in enumerate([(0, 1), (1, None)]):
        samples.append(sample("kg_movie_genre", i, a, p))
    samples.append(sample("assoc_rule", 0, 4, 4))
    m = compute_metrics(samples)
    relation = m["factors"]["entity relation"]
    assert relation["score"] == pytest.approx((0.75 + 0.5) / 2)  # macro, not pooled 4/6
    assert relation["measures"] == ["kg_movie_cast", "kg_movie_director"]
    assert relation["scale"] == "knowledgeability"
    know = m["scales"]["knowledgeability"]
    assert know["score"] == pytest.approx((0.75 + 0.5 + 0.0) / 3)
    assert know["missed_rate"] == pytest.approx((0 + 0 + 0.5) / 3)
    assert m["scales"]["association"]["score"] == pytest.approx(1.0)
    assert m["overall"]["score"] == pytest.approx((0.75 + 0.5 + 0.0 + 1.0) / 4)
    for group in [*m["factors"].values(), *m["scales"].values()]:
        assert group["ci_low"] <= group["score"] + 1e-12 <= group["ci_high"] + 2e-12


def _random_samples(n: int, p: float, seed: int, measure: str = "kg_movie_genre") -> list[dict[str, Any]]:
    draw = np.random.default_rng(seed)
    out = []
    for i in range(n):
        answer = int(draw.integers(4))
        parsed = answer if draw.random() < p else int((answer + 1) % 4)
        out.append(sample(measure, i, answer, parsed))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_ci_contains_estimate_and_shrinks_with_n(seed: int) -> None:
    widths = []
    for n in (50, 400, 3200):
        row = compute_metrics(_random_samples(n, 0.4, seed), seed=seed)["measures"]["kg_movie_genre"]
        assert row["ci_low"] <= row["score"] <= row["ci_high"]
        widths.append(row["ci_high"] - row["ci_low"])
    assert widths[0] > widths[1] > widths[2]
    # A binomial proportion's 95% interval is about 2 * 1.96 * sqrt(p(1-p)/n) wide.
    assert widths[2] == pytest.approx(2 * 1.96 * np.sqrt(0.24 / 3200), rel=0.25)


def test_metrics_are_seeded_and_deterministic() -> None:
    samples = _random_samples(100, 0.5, 1) + _random_samples(50, 0.3, 2, "kg_movie_cast")
    assert compute_metrics(samples, seed=3) == compute_metrics(samples, seed=3)
    a, b = compute_metrics(samples, seed=3), compute_metrics(samples, seed=4)
    # A measure's interval is exact (no draw); a macro average's comes from the seeded bootstrap.
    assert a["measures"] == b["measures"]
    overall_a, overall_b = a["overall"], b["overall"]
    assert (overall_a["ci_low"], overall_a["ci_high"]) != (overall_b["ci_low"], overall_b["ci_high"])


def test_paired_comparison() -> None:
    answers = [i % 4 for i in range(200)]
    a = [sample("kg_movie_genre", i, ans, ans) for i, ans in enumerate(answers)]  # always right
    b = [sample("kg_movie_genre", i, ans, ans if i % 2 else (ans + 1) % 4) for i, ans in enumerate(answers)]
    b.append(sample("kg_movie_genre", 999, 0, 0))  # only in b: ignored
    cmp = paired_comparison(a, b, seed=0)
    row = cmp.measures["kg_movie_genre"]
    assert (cmp.n_common, cmp.only_a, cmp.only_b) == (200, 0, 1)
    assert row.diff == pytest.approx(0.5)
    assert row.ci_low is not None and row.ci_high is not None
    assert row.ci_low > 0.4 and row.ci_high < 0.6
    assert row.ci_low <= row.diff <= row.ci_high
    assert row.significant and cmp.overall.significant
    assert (row.wins_a, row.wins_b) == (100, 0) and row.p_value == pytest.approx(2 * 0.5**100)
    same = paired_comparison(a, a).measures["kg_movie_genre"]
    assert same.diff == 0.0 and same.p_value == 1.0 and not same.significant
    # No discordant question is still evidence of limited size: the interval never collapses to a point.
    assert same.ci_low is not None and same.ci_high is not None and same.ci_low < 0.0 < same.ci_high
    with pytest.raises(DataError, match="share no question"):
        paired_comparison(a, [sample("mem_item_item", 0, 1, 1)])


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"parsed_index": 7}, "parsed_index"),
        ({"answer_index": None}, "answer_index"),
        ({"correct": True, "parsed_index": 2}, "correct"),
        ({"labels": ["A", "B"]}, "labels"),
        ({"measure": "no_such_measure"}, "unknown measure"),
        ({"format": "top5"}, "field .format.*hit@1"),
    ],
)
def test_bad_samples_are_named(record: dict[str, Any], message: str) -> None:
    good = sample("kg_movie_genre", 0, 1, 1)
    bad = {**sample("kg_movie_genre", 1, 1, 1), **record}
    with pytest.raises(DataError, match=message) as info:
        compute_metrics([good, bad])
    assert "sample 2" in str(info.value)


def test_duplicate_question_is_an_error() -> None:
    s = sample("kg_movie_genre", 0, 1, 1)
    with pytest.raises(DataError, match="twice"):
        compute_metrics([s, dict(s)])


def test_load_samples_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(sample("kg_movie_genre", 0, 1, 1)) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"samples.jsonl:2"):
        load_samples(path)
    path.write_text(json.dumps(sample("kg_movie_genre", 0, 1, 1)) + "\n\n", encoding="utf-8")
    assert len(load_samples(path)) == 1
