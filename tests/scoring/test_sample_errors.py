"""Failed requests are errors, not wrong answers: they are counted, never scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.sample_records import sample
from recworld.errors import DataError
from recworld.scoring import MetricsRecord, SampleRecord, compute_metrics, load_samples, paired_comparison


def _failed(measure: str, qid: int, answer: int) -> dict[str, object]:
    return sample(measure, qid, answer, None, correct=None, missed=None, error="ModelError: HTTP 400")


def test_errors_are_excluded_from_score_ci_and_missed_rate() -> None:
    # 4 scored: 3 right, 1 missed; 6 failed requests that would otherwise drag the score to 0.3.
    samples = [sample("kg_movie_genre", i, 1, 1) for i in range(3)]
    samples.append(sample("kg_movie_genre", 3, 1, None))
    samples += [_failed("kg_movie_genre", 10 + i, 1) for i in range(6)]
    m = compute_metrics(samples)
    row = m["measures"]["kg_movie_genre"]
    assert (row["n"], row["errors"], row["correct"], row["missed"]) == (4, 6, 3, 1)
    assert row["score"] == pytest.approx(0.75)
    assert row["missed_rate"] == pytest.approx(0.25)
    assert row["ci_high"] <= 1.0 and row["ci_low"] >= 0.0
    assert row["position_bias"]["n"] == 4  # the failed ones point nowhere
    assert (m["n"], m["errors"], m["status"]) == (4, 6, "ok")
    assert m["overall"]["errors"] == 6 and m["overall"]["score"] == pytest.approx(0.75)


def test_a_run_where_every_request_failed_has_no_score() -> None:
    m = compute_metrics([_failed("kg_movie_genre", i, 1) for i in range(5)])
    assert m["status"] == "errored"
    row = m["measures"]["kg_movie_genre"]
    assert row["score"] is None and row["missed_rate"] is None and row["ci_low"] is None
    assert row["errors"] == 5 and row["n"] == 0
    assert m["overall"]["score"] is None and m["factors"]["entity attribute"]["score"] is None
    MetricsRecord.model_validate(m)  # the JSON form reads back with the same class


def test_a_measure_without_scores_does_not_enter_group_averages() -> None:
    samples = [sample("kg_movie_genre", i, 1, 1) for i in range(4)]
    samples += [_failed("kg_movie_cast", i, 1) for i in range(4)]
    m = compute_metrics(samples)
    assert m["measures"]["kg_movie_cast"]["score"] is None
    assert m["factors"]["entity attribute"]["score"] == pytest.approx(1.0)  # not (1 + 0) / 2


def test_paired_comparison_skips_failed_samples() -> None:
    a = [sample("kg_movie_genre", i, 1, 1) for i in range(10)]
    b = [sample("kg_movie_genre", i, 1, 0) for i in range(8)] + [_failed("kg_movie_genre", 8, 1)]
    cmp = paired_comparison(a, b)
    assert cmp.n_common == 8 and cmp.only_a == 2


def test_an_old_errored_sample_reads_as_unscored() -> None:
    old = sample("kg_movie_genre", 0, 1, None, error="timed out")  # /1 wrote correct=False, missed=True
    record = SampleRecord.model_validate(old)
    assert not record.scored
    assert compute_metrics([old])["status"] == "errored"


def test_sample_round_trips_through_its_file(tmp_path: Path) -> None:
    record = SampleRecord.model_validate({**sample("kg_movie_genre", 0, 1, 2), "schema": "recworld.sample/2"})
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(record.to_json()) + "\n", encoding="utf-8")
    assert load_samples(path) == [record]
    assert record.to_json()["schema"] == "recworld.sample/2"
    path.write_text(json.dumps({**record.to_json(), "surprise": 1}) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"samples.jsonl:1: field 'surprise'"):
        load_samples(path)
