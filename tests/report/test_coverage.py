"""Runs that answered different questions: averages over the shared ones, partial runs named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from synthetic_runs import MOVIE_MEASURES, always_first, make_suite, skilled, write_run

from recworld.report.coverage import comparable
from recworld.report.diagnostics import iso_time
from recworld.report.model import dataset_section
from recworld.report.runs import label_runs, load_run
from recworld.report.tables import fmt_ci
from recworld.report.writer import write_report
from recworld.scoring import score_samples

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cli"))
from cli_helpers import RECWORLD, cli_env

SUBSET = ("assoc_rule", "mem_item_item")


def _two_runs(suite: Path) -> None:
    write_run(suite / "runs" / "full", model="itemknn", dataset="ml-100k", measures=MOVIE_MEASURES,
              policy=skilled(0.7), n=40, seed=1)  # fmt: skip
    write_run(suite / "runs" / "part", model="popularity", dataset="ml-100k", measures=SUBSET,
              policy=always_first(), n=5, seed=2)  # fmt: skip


def test_averages_use_only_what_every_run_answered(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    _two_runs(suite)
    runs = [load_run(suite / "runs" / name) for name in ("full", "part")]
    label_runs(runs)
    section = dataset_section("ml-100k", runs, seed=0)

    shared = [s for s in runs[0].samples if s.measure in SUBSET and int(s.question_id[-5:]) < 5]
    expected = score_samples(shared, seed=0).overall
    own = runs[0].metrics.overall
    assert expected is not None and own is not None
    overall = {row[0].text: row[-1].text for row in section.scales.rows}
    assert overall["itemknn"] == fmt_ci(expected.score, expected.ci_low, expected.ci_high)
    assert overall["itemknn"] != fmt_ci(own.score, own.ci_low, own.ci_high)
    # The per-measure table keeps every run's own questions: itemknn's 40 per measure.
    assert "n = 40" in section.main.rows[1][1].title
    assert section.paired is not None and section.paired.columns[1:-1] == ["Assoc rule", "Mem item-item"]
    notes = " ".join(section.notes)
    assert "Partial runs: popularity (2 measures, 10 questions)" in notes
    assert "the 2 measures and 10 questions every run answered" in notes
    assert "Small samples:" in notes and "smallest n = 5" in notes


def test_runs_over_the_same_questions_are_left_alone(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    for name, seed in (("a", 1), ("b", 2)):
        write_run(suite / "runs" / name, model=name, dataset="ml-100k", measures=SUBSET,
                  policy=skilled(0.5), n=40, seed=seed)  # fmt: skip
    runs = [load_run(suite / "runs" / name) for name in ("a", "b")]
    same, note = comparable(runs)
    assert note is None and [r.metrics for r in same] == [r.metrics for r in runs]


def test_markdown_marks_partial_runs_once_under_one_runs_heading(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    _two_runs(suite)
    written = write_report([suite], tmp_path / "out")
    md = written["markdown"].read_text()
    assert md.count("## Runs") == 1 and "### Runs" not in md
    runs_table = md.split("## Runs", 1)[1]
    assert "| popularity | part | ml-100k | 10 | 5 | partial |" in runs_table
    assert "| itemknn | full |" in runs_table and "2025-01-01T10:05:00Z" in runs_table
    assert "model spec" not in runs_table  # the label already names the model
    assert "> Partial runs: popularity" in md


def test_old_epoch_times_read_as_iso() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00Z" and iso_time("1796068018") == "2026-11-30T19:46:58Z"
    assert iso_time("2025-01-01T10:05:00Z") == "2025-01-01T10:05:00Z" and iso_time(None) == "–"


def test_a_skipped_image_measure_points_to_describe_images(tmp_path: Path) -> None:
    from recworld.lrworld.manifest import SuiteManifest, UsersSkipped

    suite = make_suite(tmp_path)
    manifest = SuiteManifest(dataset="ml-100k", domain="movie", fingerprint="f" * 64, config={}, seed=0,
                             counts={"assoc_rule": 40},
                             skipped={"mm_poster": "dataset has no item field image_description"},
                             users_skipped=UsersSkipped(too_short_history=0, rule="test"))  # fmt: skip
    (suite / "manifest.json").write_text(json.dumps(manifest.to_json()))
    write_run(suite / "runs" / "a", model="a", dataset="ml-100k", measures=SUBSET, policy=skilled(0.5))
    md = write_report([suite], tmp_path / "out")["markdown"].read_text()
    assert "Measures the suite skipped: mm_poster (dataset has no item field image_description; " in md
    assert "run `recworld describe-images`" in md


def test_report_names_skipped_runs_on_stderr(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    _two_runs(suite)
    (suite / "runs" / "vllm-foo__generate__zero-shot").mkdir()
    result = subprocess.run([str(RECWORLD), "report", str(suite)], env=cli_env(tmp_path / "home"),
                            capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "recworld: warning: skipped unfinished runs (no samples.jsonl):" in result.stderr
    assert "vllm-foo__generate__zero-shot" in result.stderr
    assert result.stdout.splitlines()[0].endswith("report.md")  # stdout: only the written paths
