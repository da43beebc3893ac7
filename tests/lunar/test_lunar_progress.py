"""LUNAR progress off a terminal and the cost estimate before a local model's long wait."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.lunar import lunar_responder
from recworld.chat import Request
from recworld.lunar.cli.progress import BackgroundPlan, CostEstimate, PieceLines
from recworld.lunar.llm.plan import PlannedStage, planned
from recworld.lunar.llm.tracking import current, tracking
from recworld.lunar.store.outputs import SynthManifest
from recworld.testing.fake_server import FakeOpenAIServer


def _plan(requests: int) -> Callable[[], Mapping[str, PlannedStage]]:
    return lambda: {"answer": planned("llamacpp:m", requests, 64, ["a prompt of some length"], exact=True)}


def test_lines_every_tenth_of_the_plan_and_the_last_one(capsys: pytest.CaptureFixture[str]) -> None:
    plan = BackgroundPlan(_plan(20))
    plan.start()
    plan.wait(5)
    with tracking("eval", progress=False, sinks=[PieceLines("eval", plan, every_s=3600)]):
        tracker = current()
        assert tracker is not None
        for i in range(20):
            tracker.asked("answer")
            tracker.answered("answer", failed=i == 3)
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("recworld: progress:")]
    assert len(lines) == 10  # one per 2 pieces (a tenth of 20); none extra at the end
    assert lines[0].startswith(
        "recworld: progress: lunar eval (stage 1 of 1: answer; at most 20 planned): 2/20 pieces answered"
    )
    last = "recworld: progress: lunar eval (stage 1 of 1: answer; at most 20 planned): 20/20"
    assert lines[-1].startswith(last)
    assert "1 errors" in lines[-1]


def test_lines_before_the_first_piece_count_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    """U15: while the model loads nothing is asked yet; the lines count the plan, never 0/0."""
    with tracking(
        "synth", progress=False, sinks=[PieceLines("synth", BackgroundPlan(_plan(7)), every_s=0.2)]
    ):
        time.sleep(0.5)
    lines = [x for x in capsys.readouterr().err.splitlines() if "progress: lunar synth" in x]
    assert lines and all("0/0 " not in x for x in lines) and "0/7 pieces answered" in lines[0]


def test_a_line_every_few_seconds_while_a_piece_is_slow(capsys: pytest.CaptureFixture[str]) -> None:
    with tracking("synth", progress=False, sinks=[PieceLines("synth", every_s=0.2)]):
        tracker = current()
        assert tracker is not None
        tracker.asked("profile")
        time.sleep(0.7)  # no piece finishes: the timer still says the command is alive
    lines = [x for x in capsys.readouterr().err.splitlines() if "progress: lunar synth (profile)" in x]
    assert len(lines) >= 2 and "0/1 pieces answered" in lines[0]


def test_a_local_model_prints_its_estimate_when_over_a_minute(capsys: pytest.CaptureFixture[str]) -> None:
    estimate = CostEstimate("synth", BackgroundPlan(_plan(53)))
    with tracking("synth", progress=False, sinks=[estimate]):
        tracker = current()
        assert tracker is not None
        tracker.opened(1, 8)  # a llama.cpp model: one request at a time
        estimate.plan.wait(5)
        tracker.asked("profile")
        tracker.completed(0.01, cache_hit=True)  # a cache hit says nothing about speed
        assert estimate.said is None
        tracker.completed(12.0, cache_hit=False)
        tracker.answered("profile", failed=False)
    err = capsys.readouterr().err
    # 53 planned, none answered when the first request came back: 53 x 12 s = 10m36s.
    assert "estimate: lunar synth: at most 53 more requests of 53 planned" in err
    assert "about 10m36s at 12.0s per request (measured on one), 1 at a time" in err
    assert "prompt tokens in the stages rendered now" in err


def test_no_estimate_for_an_api_model_and_a_short_one_is_only_logged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    api = CostEstimate("eval", BackgroundPlan(_plan(500)))
    short = CostEstimate("eval", BackgroundPlan(_plan(3)))
    with tracking("eval", progress=False, sinks=[api, short]):
        tracker = current()
        assert tracker is not None
        tracker.opened(None, 8)  # api: no bound, so no plan is even computed
        short.opened(tracker, 1, 8)
        short.plan.wait(5)
        tracker.completed(2.0, cache_hit=False)
    assert api.said is None and api.plan.stages is None
    assert short.said is not None and "about 6s" in short.said
    assert "estimate" not in capsys.readouterr().err


def test_smoke_synth_off_a_terminal_says_its_preset_and_its_progress(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    openai_server: Callable[[Callable[[Request], str]], FakeOpenAIServer],
) -> None:
    base = lunar_responder(copy_anchors=False)

    def one_record(request: Request) -> str:  # the preset asks for one record per slot
        reply = base(request)
        if (request.json_schema or {}).get("title") == "RecordsDraft":
            return json.dumps({"records": json.loads(reply)["records"][:1]})
        return reply

    server = openai_server(one_record)
    monkeypatch.chdir(tmp_path)
    args = ["lunar", "synth", "--anchors", "lunar-demo", "--smoke", "--model", "openai:m"]
    ran = run_recworld(*args, "--base-url", server.base_url, "--out", "run")
    err = ran.stderr
    assert ran.returncode == 0, err
    preset = "recworld: smoke preset: --users 1 --weeks 1 --active-days 1 --max-slots 1 --max-records 1"
    assert preset in err and "--regenerations 0 --no-validate" in err
    lines = [x for x in err.splitlines() if x.startswith("recworld: progress: lunar synth")]
    assert lines and lines[-1].endswith("elapsed") and "5/5 pieces answered" in lines[-1]
    assert "at most 5 planned" in lines[-1]  # the dry-run plan gave the total
    assert len(server.chat) == 5  # a handful of calls: profile, week, days, slots, records
    log = (tmp_path / "run" / "recworld.log").read_text()
    assert "progress: lunar synth" in log
    manifest = SynthManifest.of(tmp_path / "run")
    assert (manifest.config.users, manifest.config.options.weeks, manifest.counts.records) == (1, 1, 1)
    # A typed flag wins over the preset.
    ran = run_recworld(*args, "--weeks", "2", "--base-url", server.base_url, "--out", "run2")
    err = ran.stderr
    assert ran.returncode == 0, err
    assert "--weeks" not in err.split("smoke preset:", 1)[1].splitlines()[0]
    assert SynthManifest.of(tmp_path / "run2").config.options.weeks == 2


def test_smoke_eval_and_queries_plans_are_a_handful_of_requests(tmp_path: Path) -> None:
    from helpers.report_folders import RunSpec, write_folder

    root = write_folder(tmp_path / "run", [RunSpec("openai:a", "none", [(3, 3)])], privacy_on=False)
    model = ["--model", "openai:a", "--judge", "openai:j", "--dry-run", "--json"]
    out = run_recworld("lunar", "eval", root, "--smoke", *model)
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert list(plan["stages"]) == ["answer (full)", "judge", "privacy"]  # the full context only
    assert plan["requests"] == 3 and plan["stages"]["answer (full)"]["max_reply_tokens"] == 96
    assert "smoke preset: --context full --max-tokens 96" in out.stderr
    queries = run_recworld("lunar", "queries", root, "--smoke", "--model", "openai:g", "--dry-run", "--json")
    assert queries.returncode == 0, queries.stderr
    plan = json.loads(queries.stdout)
    assert plan["stages"]["query"]["requests"] == 1 and plan["requests"] <= 6
