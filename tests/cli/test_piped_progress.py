"""Every command that can run past a few seconds says what it does when stderr is a pipe.

Invariant (docs/cli.md, "Progress"): ``export``, ``lunar synth | queries | eval |
ablate | report`` (and ``build``, ``report``, ``eval``, tested beside their commands)
write ``recworld: progress: ...`` lines to a non-terminal stderr: what runs now, a
done/total count, the time elapsed, and at least every ``EVERY_S`` seconds while
nothing finishes; a line never reads ``0/0``. Each command runs here in-process
through the real entry point, with a pipe for stderr (pytest's capture) and a
shortened interval; the LUNAR stages answer one simulated piece each, through the
same tracker a model call reports to.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_in_process
from helpers.report_folders import RunSpec, write_folder
from helpers.runner_fakes import write_suite

PROGRESS = "recworld: progress:"


def _lines(err: str) -> list[str]:
    lines = [x for x in err.splitlines() if x.startswith(PROGRESS)]
    assert all(" 0/0 " not in x for x in lines), lines
    return lines


def _one_piece(stage: str) -> Callable[[Any], list[Any]]:
    """An api call that asks one piece after a pause and answers it after another."""

    def call(config: Any) -> list[Any]:
        from recworld.lunar.llm.tracking import current

        tracker = current()
        assert tracker is not None
        time.sleep(0.15)  # preparing: nothing asked yet
        tracker.asked(stage)
        time.sleep(0.15)  # a slow piece: the timer still writes
        tracker.answered(stage, failed=False)
        return []  # no runs: the printer is replaced too

    return call


STAGES = {
    # command: (api function, printer, its stage name, arguments after the command)
    "synth": ("synthesize", "synth_done", "profile", ["--anchors", "lunar-demo", "--out", "run"]),
    "queries": ("make_queries", "queries_done", "query", ["ROOT"]),
    "eval": ("evaluate_contexts", "eval_done", "judge", ["ROOT", "--judge", "openai:j"]),
    "ablate": ("ablate", "ablate_done", "judge", ["ROOT", "--judge", "openai:j"]),
}


@pytest.mark.parametrize("command", sorted(STAGES))
def test_a_lunar_stage_reports_progress_when_piped(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recworld.lunar import api
    from recworld.lunar.cli import output, progress

    function, printer, stage, args = STAGES[command]
    monkeypatch.setattr(progress, "EVERY_S", 0.05)
    monkeypatch.setattr(api, function, _one_piece(stage))
    monkeypatch.setattr(output, printer, lambda *a, **k: None)
    root = str(tmp_path / "root")
    argv = [a.replace("ROOT", root) for a in args]
    done = run_in_process(monkeypatch, tmp_path, "lunar", command, *argv, "--model", "openai:m")
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stderr)
    assert len(lines) >= 3, done.stderr  # preparing, the slow piece, the last count
    assert f"progress: lunar {command} (preparing" in lines[0]
    assert "elapsed" in lines[0]
    # a plan known before any piece (synth's, from its settings) is the total from the first line;
    # without one, the line says there is nothing to count yet; never a "0/0"
    total = r"\d+" if command == "synth" else "1"
    if command != "synth":
        assert "nothing to count yet" in lines[0], lines[0]
    assert not any(" 0/0 " in x for x in lines), lines
    assert any(stage in x and re.search(rf"\b0/{total} pieces answered", x) for x in lines), lines
    assert re.search(rf"\b1/{total} pieces answered", lines[-1]), lines[-1]


def test_export_reports_its_steps_when_piped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = write_suite(tmp_path / "suite", {"kg_movie_genre": 3, "mem_item_item": 2})
    manifest = json.loads((suite / "manifest.json").read_text())
    manifest["questions_sha256"] = {  # what a build records: export verifies each file
        m: hashlib.sha256((suite / "questions" / f"{m}.jsonl").read_bytes()).hexdigest()
        for m in manifest["counts"]
    }
    (suite / "manifest.json").write_text(json.dumps(manifest))
    done = run_in_process(
        monkeypatch, tmp_path, "export", str(suite), "--to", "hf", "--out", str(tmp_path / "hf")
    )
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stderr)
    assert [x.split(", ")[0] for x in lines[:3]] == [
        f"{PROGRESS} export: export for hf 0/3 (0.0%)",
        f"{PROGRESS} export: export for hf 1/3 (33.3%)",
        f"{PROGRESS} export: export for hf 2/3 (66.7%)",
    ]
    assert "writing 2 measures for hf" in lines[1] and all("elapsed" in x for x in lines)
    quiet = run_in_process(
        monkeypatch, tmp_path, "export", str(suite), "--to", "hf", "--out", str(tmp_path / "hf"),
        "--no-progress",
    )  # fmt: skip
    assert quiet.returncode == 0 and PROGRESS not in quiet.stderr


def test_lunar_report_reports_its_steps_when_piped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_folder(tmp_path / "run", [RunSpec("openai:a", "none", [(3, 3), (2, 4)])], privacy_on=False)
    done = run_in_process(monkeypatch, tmp_path, "lunar", "report", str(root))
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stderr)
    assert lines and lines[0].startswith(f"{PROGRESS} lunar report: lunar report 0/4")
    assert "reading and scoring the runs" in lines[0]
    assert any("rendering report.html" in x for x in lines)


def test_a_slow_step_still_writes_a_line(capsys: pytest.CaptureFixture[str]) -> None:
    """The timer: a step that runs long gets a line every ``every_s``, with its count and elapsed."""
    from recworld.console.progress import StageProgress

    with StageProgress(enabled=True, plain=True, label="export", every_s=0.05) as view:
        view.overall("export for hf", 1, 3)
        view.step("writing 2 measures for hf")
        err, deadline = "", time.monotonic() + 10  # a loaded machine may starve the timer thread a while
        while err.count("export for hf 1/3") < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
            err += capsys.readouterr().err
    lines = _lines(err + capsys.readouterr().err)
    counted = [x for x in lines if "export for hf 1/3" in x]  # (a tick may come before the first step)
    assert len(counted) >= 3 and counted[-1] == lines[-1]
    assert "about" in lines[-1] and "left" in lines[-1]  # an estimate from the steps so far
