"""Old records the report reads are migrated explicitly, never by dropping what they hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recworld.errors import DataError
from recworld.evaluation.records import RunHeader, read_run_header
from recworld.runner import RunnerStats

RUN_1 = {
    "schema": "recworld.run/1",
    "model": "scripted:a",
    "mode": "generate",
    "variant": "zero-shot",
    "suite": "/suites/toy",
    "counts": {
        "questions": 10,
        "answered": 9,
        "errors": 1,
        "missed": 2,
        "resumed": 0,
        # recworld.run/1 spelt the runner's counters flat.
        "runner_requests": 10,
        "runner_sent": 12,
        "runner_cache_hits": 3,
        "runner_coalesced": 0,
        "runner_retries": 2,
        "runner_errors": 1,
    },
}


def test_a_run_1_header_keeps_its_runner_counters(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN_1))
    header = read_run_header(path)
    assert header.counts.runner == RunnerStats(
        requests=10, sent=12, cache_hits=3, coalesced=0, retries=2, errors=1
    )
    assert (header.counts.questions, header.counts.answered, header.counts.missed) == (10, 9, 2)
    # Written again, it is a run/2 counts block: the counters nested, nothing lost.
    again = RunHeader.model_validate(header.to_json())
    assert again.to_json()["counts"]["runner"] == {
        "requests": 10,
        "sent": 12,
        "cache_hits": 3,
        "coalesced": 0,
        "retries": 2,
        "errors": 1,
    }


def test_an_unknown_count_is_an_error_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN_1 | {"counts": RUN_1["counts"] | {"tokens": 5}}))  # type: ignore[operator]
    with pytest.raises(DataError, match=r"run\.json: field 'counts\.tokens'"):
        read_run_header(path)
    path.write_text(json.dumps(RUN_1 | {"counts": {"runner": {"sent": "many"}}}))
    with pytest.raises(DataError, match=r"counts\.runner\.sent"):
        read_run_header(path)
