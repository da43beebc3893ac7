"""A run folder accumulates; generation settings reach the request; Ctrl-C says how far it got."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from _runner_fakes import write_suite
from test_evaluate import config, oracle, read_jsonl, use_model

from recworld.chat import Request
from recworld.console import interrupt_message
from recworld.evaluation import evaluate
from recworld.evaluation.eval_output import run_summary
from recworld.models.scripted import ScriptedModel

COUNTS = {"kg_movie_genre": 5, "mem_item_item": 4}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", COUNTS)


def test_a_later_subset_adds_and_never_removes(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_model(monkeypatch, ScriptedModel(oracle))
    run_dir = evaluate(config(suite, limit=3))
    assert len(read_jsonl(run_dir / "samples.jsonl")) == 6
    evaluate(config(suite, measures=("mem_item_item",)))  # all 4 of one measure
    evaluate(config(suite, limit=1))  # a smaller limit
    ids = [(s["measure"], s["question_id"]) for s in read_jsonl(run_dir / "samples.jsonl")]
    assert len(ids) == len(set(ids)) == 3 + 4  # kg: the first 3; mem: all 4
    run = json.loads((run_dir / "run.json").read_text())
    assert run["counts"]["questions"] == 7 and run["measures"] == ["kg_movie_genre", "mem_item_item"]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["measures"]["mem_item_item"]["n"] == 4 and metrics["measures"]["kg_movie_genre"]["n"] == 3
    assert run["finished"].endswith("Z") and "T" in run["started"]  # ISO times, not epoch seconds


def test_temperature_and_system_reach_the_request(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = ScriptedModel(oracle)
    use_model(monkeypatch, model)
    run_dir = evaluate(config(suite, limit=1, temperature=0.6, system="Answer tersely."))
    assert {r.temperature for r in model.calls} == {0.6}
    assert all(r.messages[0].role == "system" for r in model.calls)
    assert all(r.messages[0].content.startswith("Answer tersely.") for r in model.calls)
    sample = read_jsonl(run_dir / "samples.jsonl")[0]
    assert sample["prompt"][0] == {"role": "system", "content": "Answer tersely."}


def test_an_unclosed_think_block_is_a_miss(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_model(monkeypatch, ScriptedModel(lambda r: "<think>The user liked it. Option A is"))
    run_dir = evaluate(config(suite, limit=1))
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert all(s["missed"] is True and s["parsed_index"] is None for s in samples)


def test_ctrl_c_reports_how_many_were_answered(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Request] = []

    def answer_then_interrupt(request: Request) -> str:
        calls.append(request)
        if len(calls) == 4:
            signal.raise_signal(signal.SIGINT)
        return "A"

    use_model(monkeypatch, ScriptedModel(answer_then_interrupt, delay_s=0.05))
    with pytest.raises(KeyboardInterrupt):
        evaluate(config(suite, concurrency=1))
    message = interrupt_message()
    assert message.startswith("interrupted: ") and message.endswith(
        "/9 answered; rerun the same command to resume"
    )
    done = int(message.removeprefix("interrupted: ").split("/")[0])
    assert 3 <= done <= 4
    run_dir = suite / "runs" / "scripted__generate__zero-shot"
    assert len((run_dir / ".samples.journal.jsonl").read_text().splitlines()) == done


def test_a_baseline_reports_no_sent_requests(suite: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_model(monkeypatch, ScriptedModel(oracle))
    run_dir = evaluate(config(suite, limit=1).model_copy(update={"model": "popularity"}))
    assert "runner" not in run_summary(run_dir)["counts"]
    scripted = evaluate(config(suite, limit=1))
    assert "runner" in run_summary(scripted)["counts"]
