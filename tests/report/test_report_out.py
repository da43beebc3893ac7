"""``recworld report --out`` never writes into a folder recworld did not write."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import run_recworld
from recworld.errors import ConfigError
from recworld.evaluation.records import RUN_KIND
from recworld.io import mark_output_dir, output_kind, output_kinds
from recworld.report import write_report


def test_report_refuses_a_foreign_folder_and_keeps_its_files(movie_suite: Path, tmp_path: Path) -> None:
    runs = [movie_suite]
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "report.html").write_text("my own page", encoding="utf-8")
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    # report.html alone is not an earlier report (report.md is what recworld writes first)
    with pytest.raises(ConfigError, match="not written by recworld"):
        write_report(runs, foreign)
    assert (foreign / "report.html").read_text(encoding="utf-8") == "my own page"
    ran = run_recworld("report", *runs, "--out", foreign)
    err = ran.stderr
    assert ran.returncode == 2 and err.startswith("recworld: error:")
    assert "Traceback" not in err
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt", "report.html"]


def test_report_rewrites_its_own_folder_and_a_run_folder(movie_suite: Path, tmp_path: Path) -> None:
    runs = [movie_suite]
    out = tmp_path / "report"
    write_report(runs, out)
    assert output_kind(out) == "report"
    write_report(runs, out)  # a rerun replaces its own report
    run = movie_suite / "runs" / "gpt"
    with pytest.raises(ConfigError, match="not written by recworld"):  # run.json alone makes no run folder
        write_report([run], run)
    mark_output_dir(run, RUN_KIND)  # what recworld eval does once the run has finished
    write_report([run], run)  # a single run's report lives in the run folder, beside it
    assert (run / "report.md").is_file() and output_kinds(run) == {RUN_KIND, "report"}
