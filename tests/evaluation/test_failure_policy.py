"""The failure policy end to end: ``recworld eval`` against real loopback servers and fake backends.

A failed request is an error, not a wrong answer; a rejected key or an
unreachable server stops the run with exit 3 in seconds; too many failed
samples exit 3 after writing them; a bug in our code is never swallowed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_recworld
from helpers.runner_fakes import answer_for, write_suite
from recworld.chat import Request
from recworld.evaluation import EvalConfig, evaluate_config
from recworld.models.scripted import ScriptedModel
from recworld.report import write_report
from recworld.runner import RunnerConfig
from recworld.testing.fake_server import FakeOpenAIServer, refused_url

COUNTS = {"kg_movie_genre": 10, "mem_item_item": 10}
FAKE_KEY = "sk-test-policy-0123456789"


def rejecting_server() -> FakeOpenAIServer:
    """Answers every POST with 401 and stops itself after 30 s."""
    return FakeOpenAIServer("status", "401", message="Incorrect API key provided", lifetime_s=30.0)


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return write_suite(tmp_path / "suite", COUNTS)


def eval_args(suite: Path, url: str, out: Path, *extra: str) -> list[str]:
    return [
        "eval", str(suite), "--model", "openai:fake-model", "--base-url", url, "--out", str(out),
        "--concurrency", "2", "--no-progress", "--max-retries", "2", "--backoff", "0.01",
        "--backoff-max", "0.02", "--timeout", "5", *extra,
    ]  # fmt: skip


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.timing
def test_a_rejected_key_stops_the_run_with_exit_3_and_no_score(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with rejecting_server() as server:
        started = time.monotonic()
        ran = run_recworld(*eval_args(suite, server.base_url, out))
        code = ran.returncode
        elapsed = time.monotonic() - started
    err = ran.stderr.strip().splitlines()
    assert code == 3 and elapsed < 10
    assert len(err) == 1 and "401" in err[0] and FAKE_KEY not in err[0]
    assert len(server.requests) <= 4  # stopped at once: the requests in flight, not all 20
    run = read_json(out / "run.json")
    assert run["status"] == "stopped" and "401" in run["reason"]
    metrics = read_json(out / "metrics.json")
    assert metrics["status"] == "errored" and metrics["overall"]["score"] is None
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert samples and all(s["error"] and s["correct"] is None for s in samples)
    # The report shows the errors, never a score of 0.000 for this model.
    written = write_report([out], tmp_path / "report")
    markdown = written["markdown"].read_text(encoding="utf-8")
    assert "errors:" in markdown and "Failed requests" in markdown and "stopped" in markdown
    table_row = next(line for line in markdown.splitlines() if line.startswith("| openai:fake-model"))
    assert "0.000" not in table_row
    csv_rows = written["metrics_csv"].read_text(encoding="utf-8").splitlines()
    assert all(",," in row for row in csv_rows[1:])  # score cells are empty, not 0


@pytest.mark.timing
def test_a_refused_connection_stops_the_run_once_retries_are_spent(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    started = time.monotonic()
    ran = run_recworld(*eval_args(suite, refused_url(), out))
    code = ran.returncode
    elapsed = time.monotonic() - started
    err = ran.stderr.strip().splitlines()
    assert code == 3 and elapsed < 10
    assert len(err) == 1 and "gave up after 3 attempts" in err[0] and "connect" in err[0]
    run = read_json(out / "run.json")
    assert run["status"] == "stopped" and run["counts"]["answered"] == 0
    assert read_json(out / "metrics.json")["status"] == "errored"


def half_fail(key: str) -> list[str]:
    """Questions whose fake answer is A or B get HTTP 500 on every attempt: about half."""
    return ["500"] * 10 if answer_for(key) in "AB" else []


@pytest.mark.parametrize(("threshold", "code"), [("0.9", 0), ("0.05", 3)])
def test_the_fail_on_error_threshold(suite: Path, tmp_path: Path, threshold: str, code: int) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer("letters", plan=half_fail) as server:
        ran = run_recworld(*eval_args(suite, server.base_url, out, "--fail-on-error", threshold))
        assert ran.returncode == code
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    failed = [s for s in samples if s["error"]]
    assert len(samples) == 20 and 0 < len(failed) < 20
    assert all("HTTP 500" in s["error"] and s["missed"] is None for s in failed)
    metrics = read_json(out / "metrics.json")
    assert metrics["errors"] == len(failed) and metrics["n"] == 20 - len(failed)
    run = read_json(out / "run.json")
    assert run["status"] == ("finished" if code == 0 else "too_many_errors")
    if code == 3:
        assert "--fail-on-error 0.05" in ran.stderr
    # A rerun sends only the failed samples, and succeeds once the server is healthy.
    with FakeOpenAIServer("letters") as healthy:
        ran = run_recworld(*eval_args(suite, healthy.base_url, out, "--fail-on-error", threshold))
        assert ran.returncode == 0, ran.stderr
    assert sum(healthy.counts.values()) == len(failed)
    assert read_json(out / "run.json")["status"] == "finished"
    assert read_json(out / "metrics.json")["errors"] == 0


def test_a_bug_in_a_backend_propagates(suite: Path) -> None:
    def buggy(request: Request) -> str:
        return request.choices[0] + 1  # type: ignore[operator, return-value]

    config = EvalConfig(suite_dir=suite, model="scripted", runner=RunnerConfig(progress=False))
    with pytest.raises(TypeError, match="can only concatenate str"):
        evaluate_config(config, model=ScriptedModel(buggy))
    journal = suite / "runs" / "scripted__generate__zero-shot" / ".samples.journal.jsonl"
    assert not journal.exists() or journal.read_text() == ""  # never recorded as a sample error


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        ("--timeout", "0", "--timeout"),
        ("--fail-on-error", "2", "--fail-on-error"),
        ("--limit", "0", "--limit"),
    ],
)
def test_bad_options_are_named_as_typed(suite: Path, option: str, value: str, named: str) -> None:
    ran = run_recworld("eval", str(suite), "--model", "scripted", option, value)
    assert ran.returncode == 2
    err = ran.stderr
    assert f"invalid value for {named}:" in err and "timeout_s" not in err


@pytest.fixture(autouse=True)
def _no_stray_threads() -> Iterator[None]:
    before = threading.active_count()
    yield
    deadline = time.monotonic() + 5
    while threading.active_count() > before + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
