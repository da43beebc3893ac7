"""A run folder accumulates; generation settings reach the request; Ctrl-C writes what is done."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from helpers.eval_support import config, evaluate_with, oracle, read_jsonl
from helpers.runner_fakes import write_suite
from recworld.chat import Request
from recworld.console import interrupt_message
from recworld.evaluation import evaluate_config
from recworld.evaluation.eval_output import run_summary
from recworld.models.scripted import ScriptedModel

COUNTS = {"kg_movie_genre": 5, "mem_item_item": 4}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", COUNTS)


def test_a_later_subset_adds_and_never_removes(suite: Path) -> None:
    model = ScriptedModel(oracle)
    run_dir = evaluate_with(model, config(suite, limit=3))
    assert len(read_jsonl(run_dir / "samples.jsonl")) == 6
    evaluate_with(model, config(suite, measures=("mem_item_item",)))  # all 4 of one measure
    evaluate_with(model, config(suite, limit=1))  # a smaller limit
    ids = [(s["measure"], s["question_id"]) for s in read_jsonl(run_dir / "samples.jsonl")]
    assert len(ids) == len(set(ids)) == 3 + 4  # kg: the first 3; mem: all 4
    assert len(model.calls) == 7  # limit and measures are a subset, not a new run: nothing re-asked
    run = json.loads((run_dir / "run.json").read_text())
    assert run["counts"]["questions"] == 7 and run["measures"] == ["kg_movie_genre", "mem_item_item"]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["measures"]["mem_item_item"]["n"] == 4 and metrics["measures"]["kg_movie_genre"]["n"] == 3
    assert run["finished"].endswith("Z") and "T" in run["started"]  # ISO times, not epoch seconds


def test_temperature_and_system_reach_the_request(suite: Path) -> None:
    model = ScriptedModel(oracle)
    run_dir = evaluate_with(model, config(suite, limit=1, temperature=0.6, system="Answer tersely."))
    assert {r.temperature for r in model.calls} == {0.6}
    assert all(r.messages[0].role == "system" for r in model.calls)
    assert all(r.messages[0].content.startswith("Answer tersely.") for r in model.calls)
    sample = read_jsonl(run_dir / "samples.jsonl")[0]
    assert sample["prompt"][0] == {"role": "system", "content": "Answer tersely."}


def test_an_unclosed_think_block_is_a_miss(suite: Path) -> None:
    run_dir = evaluate_with(
        ScriptedModel(lambda r: "<think>The user liked it. Option A is"), config(suite, limit=1)
    )
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert all(s["missed"] is True and s["parsed_index"] is None for s in samples)


@pytest.mark.timing
def test_ctrl_c_stops_at_once_and_writes_what_is_done(suite: Path) -> None:
    calls: list[Request] = []
    interrupted_at: list[float] = []

    def answer_then_interrupt(request: Request) -> str:
        calls.append(request)
        if len(calls) == 4:
            interrupted_at.append(time.monotonic())
            signal.raise_signal(signal.SIGINT)
        return "A"

    slow = ScriptedModel(answer_then_interrupt, delay_s=0.3)  # 9 questions: 2.7 s if not stopped
    with pytest.raises(KeyboardInterrupt):
        evaluate_config(config(suite, concurrency=1), model=slow)
    assert time.monotonic() - interrupted_at[0] < 1.0  # stopped within a second of Ctrl-C
    message = interrupt_message()
    assert message.startswith("interrupted: ") and message.endswith(
        "/9 answered; rerun the same command to resume"
    )
    done = int(message.removeprefix("interrupted: ").split("/")[0])
    # The signal arrives inside the 4th answer: the engine stops there, so that answer may or may
    # not have been recorded, and the 5th is never asked.
    assert done in (3, 4) and len(calls) == 4
    run_dir = suite / "runs" / "scripted__generate__zero-shot"
    assert len((run_dir / ".samples.journal.jsonl").read_text().splitlines()) == done
    # What was done is written as a result: samples, metrics and the reason, not only the journal.
    assert len(read_jsonl(run_dir / "samples.jsonl")) == done
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["n"] == done
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "interrupted" and f"{done}/9 answered" in run["reason"]
    # A rerun resumes: only the ones not yet answered are asked (a 4th answer the cache committed
    # before the signal is a cache hit, not a new call).
    again = ScriptedModel(lambda r: "A")
    result = evaluate_config(config(suite), model=again)
    assert len(again.calls) == 5 and result.status == "finished"
    assert result.header.counts.resumed == done


def test_a_baseline_reports_no_sent_requests(suite: Path) -> None:
    baseline = evaluate_config(config(suite, limit=1).model_copy(update={"model": "random"})).run_dir
    assert "runner" not in run_summary(baseline)["counts"]
    scripted = evaluate_with(ScriptedModel(oracle), config(suite, limit=1))
    assert "runner" in run_summary(scripted)["counts"]
