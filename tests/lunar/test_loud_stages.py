"""Issue 12 for LUNAR: loud, honest stages, --retry-failures, --dry-run, --json, help and progress.

The CLI tests run ``recworld`` in-process at 80 columns (:func:`helpers.cli.run_in_process`), with
``scripted:FILE.json`` models whose replies cannot be parsed, or a local OpenAI-compatible server.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from helpers.cli import Recworld, run_in_process
from helpers.lunar import lunar_responder, scripted, session
from recworld import lunar
from recworld.chat import Request
from recworld.console import interrupt_message
from recworld.io import mark_output_dir
from recworld.lunar.config import RUN_KIND, SynthOptions
from recworld.lunar.llm import FailureRecord
from recworld.lunar.llm.policy import summary_lines
from recworld.lunar.llm.tracking import current, tracking
from recworld.models.scripted import ScriptedModel
from recworld.testing.fake_server import FakeOpenAIServer


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Recworld:
    """``run(cwd, *args)``: ``recworld ARGS`` in process from ``cwd`` as a person runs it (80 columns)."""
    return functools.partial(run_in_process, monkeypatch)


SYNTH = ["lunar", "synth", "--anchors", "lunar-demo", "--users", "1", "--weeks", "1", "--out", "runs/l"]


def test_synth_that_produces_nothing_exits_3_with_a_summary_and_keeps_the_reply(
    tmp_path: Path, run: Recworld
) -> None:
    (tmp_path / "m.json").write_text(json.dumps({"*": "Answer: X call 555-123-4567"}))
    r = run(tmp_path, *SYNTH, "--model", "scripted:m.json")
    assert r.returncode == 3, r.stderr
    assert "lunar synth: 1 of 1 pieces failed (profile 1)" in r.stderr
    assert "no JSON object in the reply" in r.stderr
    assert "rejected reply: 'Answer: X call <PHONE_1>'" in r.stderr  # de-identified
    assert "recworld: error: lunar synth produced no users" in r.stderr
    assert r.stdout == ""
    run_dir = tmp_path / "runs" / "l"
    (failure,) = [
        FailureRecord.model_validate_json(x) for x in (run_dir / "failures.jsonl").read_text().splitlines()
    ]
    assert failure.stage == "profile" and failure.reply == "Answer: X call <PHONE_1>"
    assert not (run_dir / "dataset" / "failures.jsonl").exists()  # working state, never released
    assert "lunar synth: 1 of 1 pieces failed" in (run_dir / "recworld.log").read_text()


def test_retry_failures_asks_past_the_cached_bad_replies(tmp_path: Path, run: Recworld) -> None:
    script = tmp_path / "m.json"
    script.write_text(json.dumps({"*": "Answer: X"}))
    assert run(tmp_path, *SYNTH, "--model", "scripted:m.json").returncode == 3
    profile = lunar_responder()(_request("ProfileDraft"))
    script.write_text(json.dumps({"*": profile}))  # the model would now answer well
    again = run(tmp_path, *SYNTH, "--model", "scripted:m.json")
    assert again.returncode == 3 and "(profile 1)" in again.stderr  # the cached bad replies replay
    retried = run(tmp_path, *SYNTH, "--model", "scripted:m.json", "--retry-failures")
    # The profile now validates; the next stage gets a profile-shaped reply and fails there.
    assert "profile" not in _stages(tmp_path / "runs" / "l"), retried.stderr
    assert _stages(tmp_path / "runs" / "l") and "week" in _stages(tmp_path / "runs" / "l")


def _request(title: str) -> Request:
    from recworld.chat import Message

    return Request(messages=(Message("user", "x"),), json_schema={"title": title})


def _stages(run_dir: Path) -> set[str]:
    return {json.loads(x)["stage"] for x in (run_dir / "failures.jsonl").read_text().splitlines()}


def test_retry_failures_in_the_library_resends_only_rejected_cached_replies(
    ml100k_saved: Path, tmp_path: Path
) -> None:
    good = lunar_responder()
    bad = {"on": True}

    def respond(request: Request) -> str:
        if bad["on"] and request.json_schema and request.json_schema.get("title") == "ProfileDraft":
            return "not json"
        return good(request)

    model = scripted(respond)
    anchors = str(ml100k_saved)
    from recworld.errors import RunError

    with pytest.raises(RunError, match="produced no users"):
        lunar.synthesize(_synth_config(model, anchors, tmp_path, retry=False))
    bad["on"] = False
    sent = len(model.calls)
    with pytest.raises(RunError):
        lunar.synthesize(_synth_config(model, anchors, tmp_path, retry=False))
    assert len(model.calls) == sent  # a plain rerun replays every cached reply
    assert lunar.synthesize(_synth_config(model, anchors, tmp_path, retry=True)).counts.users == 2
    profile_sends = [
        c for c in model.calls[sent:] if c.json_schema and c.json_schema.get("title") == "ProfileDraft"
    ]
    assert len(profile_sends) == 2  # one fresh send per user; the new reply replaced the cached one
    before = len(model.calls)
    assert lunar.synthesize(_synth_config(model, anchors, tmp_path, retry=True)).counts.users == 2
    assert len(model.calls) == before > sent  # valid cached replies are never re-sent


def _synth_config(model: ScriptedModel, anchors: str, tmp_path: Path, *, retry: bool) -> lunar.SynthConfig:
    llm = session(model, retry_failures=retry)
    options = SynthOptions(weeks=1, max_slots_per_day=1)
    return lunar.SynthConfig(anchors=anchors, out_dir=tmp_path / "o", users=2, llm=llm, options=options)


def test_queries_and_eval_refuse_an_empty_folder_in_one_line(tmp_path: Path, run: Recworld) -> None:
    root = tmp_path / "empty"
    (root / "dataset").mkdir(parents=True)
    for name in ("profiles", "trajectories", "records"):
        (root / "dataset" / f"{name}.jsonl").write_text("")
    (root / "queries.jsonl").write_text("")
    (root / "rubrics.jsonl").write_text("")
    mark_output_dir(root, RUN_KIND)  # a synth that finished with no users
    q = run(tmp_path, "lunar", "queries", "empty", "--model", "scripted:m.json")
    assert q.returncode == 2 and q.stderr.count("\n") == 1, q.stderr
    assert "no synthesised users" in q.stderr and "profiles.jsonl" in q.stderr
    e = run(
        tmp_path,
        "lunar",
        "eval",
        "empty",
        "--model",
        "scripted:a",
        "--judge",
        "scripted:j",
        "--context",
        "none",
    )
    assert e.returncode == 2 and e.stderr.count("\n") == 1, e.stderr
    assert "no queries with rubrics to evaluate" in e.stderr
    assert not (root / "cache.sqlite").exists() and not (root / "recworld.log").exists()


def test_dry_run_prints_counts_and_first_prompts_and_creates_nothing(tmp_path: Path, run: Recworld) -> None:
    (tmp_path / "p.csv").write_text("model,input,output\nopenai:gpt-4o-mini,0.15,0.6\n")
    args = ["lunar", "synth", "--anchors", "lunar-demo", "--users", "2", "--model", "openai:gpt-4o-mini"]
    args += ["--out", "x", "--dry-run", "--prices", "p.csv"]
    r = run(tmp_path, *args)
    assert r.returncode == 0, r.stderr
    assert "profile\t2\texact" in r.stdout and "--- first prompt of profile ---" in r.stdout
    assert "Expand this real person's demographic record" in r.stdout
    assert "dry run: nothing was sent and nothing was written" in r.stdout
    data = json.loads(run(tmp_path, *args, "--json").stdout)
    profile = data["stages"]["profile"]
    assert data["dry_run"] and profile["requests"] == 2 and profile["exact"] and profile["cost_usd"] > 0
    assert data["stages"]["records"]["requests"] == 2 * 7 * 4 and not data["stages"]["records"]["exact"]
    assert not (tmp_path / "x").exists()  # no run folder


def test_option_errors_name_the_flag_and_create_nothing(tmp_path: Path, run: Recworld) -> None:
    r = run(tmp_path, *SYNTH, "--model", "scripted:m.json", "--weeks", "60")
    assert r.returncode == 2
    assert r.stderr.startswith("recworld: error: invalid value for --weeks: ")
    assert not (tmp_path / "runs").exists()
    evaluate = ["lunar", "eval", "runs/e", "--model", "scripted:a", "--judge", "scripted:j"]
    bad = (("--rag-k", "0"), ("--timeout", "0"), ("--attempts", "11"), ("--context", "none,web"))
    for flag, value in bad:
        r = run(tmp_path, *evaluate, flag, value)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        expected = "unknown context 'web'" if flag == "--context" else f"invalid value for {flag}: "
        assert r.stderr.startswith(f"recworld: error: {expected}"), r.stderr
    r = run(tmp_path, "lunar", "eval", "runs/e", "--judge", "scripted:j")
    assert (r.returncode, r.stderr) == (2, "recworld: error: missing option --model\n")
    assert not (tmp_path / "runs").exists()


def test_every_lunar_option_has_help_and_help_fits_80_columns(tmp_path: Path, run: Recworld) -> None:
    import typer.main

    from recworld.cli import app

    group = typer.main.get_command(app).commands["lunar"]  # type: ignore[attr-defined]
    for name, command in group.commands.items():
        for param in command.params:
            assert getattr(param, "help", None), f"lunar {name} {param.name} has no help"
    for name in ("synth", "queries", "eval", "rate", "ablate"):
        r = run(tmp_path, "lunar", name, "--help")
        assert r.returncode == 0 and all(len(line) <= 80 for line in r.stdout.splitlines()), r.stdout
        for flag in (
            "--api-key-env",
            "--timeout",
            "--max-retries",
            "--no-progress",
            "--json",
            "--retry-failures",
            "--model-option",
        ):
            assert flag in r.stdout, (name, flag)
        if name in ("synth", "queries", "eval"):
            assert "--dry-run" in r.stdout


def test_failure_summary_shows_distinct_errors_and_the_reply_start() -> None:
    long = "x" * 500
    failures = [
        FailureRecord(stage="profile", key="u1", attempts=3, kind="invalid", error="no JSON", reply=long),
        FailureRecord(stage="profile", key="u2", attempts=3, kind="invalid", error="no JSON", reply="b"),
        FailureRecord(stage="week", key="u3", attempts=3, kind="request", error="timed out"),
    ]
    lines = summary_lines("synth", 5, failures, "RUN/failures.jsonl")
    assert lines[0] == "lunar synth: 3 of 5 pieces failed (profile 2, week 1)"
    assert lines[1].startswith("  2x [profile u1, invalid, 3 attempts] no JSON")
    assert lines[2] == f"     rejected reply: {'x' * 200!r}"
    assert lines[3].startswith("  1x [week u3, request") and "RUN/failures.jsonl" in lines[-1]


def test_ctrl_c_reports_pieces_answered() -> None:
    with pytest.raises(KeyboardInterrupt), tracking("synth", progress=False):
        tracker = current()
        assert tracker is not None
        tracker.asked("profile")
        tracker.asked("profile")
        tracker.answered("profile", failed=False)
        raise KeyboardInterrupt
    assert current() is None
    message = interrupt_message()
    assert message.startswith("interrupted: 1/2 pieces answered;") and "rerun the same command" in message


def test_ac1_of_the_prevalence_paradox_matches_irrcac(irrcac_raw: ModuleType) -> None:
    pd = pytest.importorskip("pandas")
    raw = irrcac_raw
    from recworld.lunar.quality.agreement import pair_agreement

    a, b = [5] * 19 + [4], [5] * 18 + [4, 5]
    theirs = raw.CAC(pd.DataFrame({"A": a, "B": b}), categories=[1, 2, 3, 4, 5], digits=10).gwet()
    assert pair_agreement(a, b)[2] == pytest.approx(theirs["est"]["coefficient_value"], abs=1e-9)


def test_synth_json_summary_is_one_document_on_stdout(
    ml100k_saved: Path,
    tmp_path: Path,
    run: Recworld,
    openai_server: Callable[[Callable[[Request], str]], FakeOpenAIServer],
) -> None:
    url = openai_server(lunar_responder()).base_url
    args = [
        "lunar",
        "synth",
        "--anchors",
        str(ml100k_saved),
        "--users",
        "2",
        "--weeks",
        "1",
        "--max-slots",
        "1",
    ]
    args += [
        "--model",
        "openai:x",
        "--base-url",
        url,
        "--out",
        str(tmp_path / "o"),
        "--json",
        "--no-progress",
    ]
    done = run(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # the whole of stdout is one JSON document
    assert data["command"] == "synth" and data["counts"]["users"] == 2 and data["counts"]["failures"] == 0
    assert (tmp_path / "o" / "recworld.log").is_file()
