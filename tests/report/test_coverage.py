"""Runs that answered different questions: averages over the shared ones, partial runs named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_in_process
from helpers.synthetic_runs import MOVIE_MEASURES, always_first, make_suite, skilled, write_run
from recworld.report.coverage import Role, coverage_groups, role_of
from recworld.report.diagnostics import iso_time
from recworld.report.model import dataset_section
from recworld.report.runs import label_runs, load_run
from recworld.report.tables import fmt_interval
from recworld.report.writer import write_report

SUBSET = ("assoc_rule", "mem_item_item")


def _two_runs(suite: Path) -> None:
    write_run(suite / "runs" / "full", model="itemknn", dataset="ml-100k", measures=MOVIE_MEASURES,
              policy=skilled(0.7), n=40, seed=1)  # fmt: skip
    write_run(suite / "runs" / "part", model="popularity", dataset="ml-100k", measures=SUBSET,
              policy=always_first(), n=5, seed=2)  # fmt: skip


def test_a_partial_run_never_shrinks_the_full_runs_averages(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    _two_runs(suite)
    write_run(suite / "runs" / "full2", model="random", dataset="ml-100k", measures=MOVIE_MEASURES,
              policy=skilled(0.1), n=40, seed=3)  # fmt: skip
    runs = [load_run(suite / "runs" / name) for name in ("full", "part", "full2")]
    label_runs(runs)
    section = dataset_section("ml-100k", runs, seed=0)

    primary, partial = section.aggregates
    own = runs[0].metrics.overall
    assert own is not None and own.score is not None
    overall = {row[0].text: row[-1].text for row in primary.scales.rows}
    # The full runs' averages are over their own 9 x 40 questions, exactly as their metrics say.
    assert overall["itemknn"] == fmt_interval(own.score, own.ci_low, own.ci_high, 40)
    assert "popularity" not in " ".join(overall)
    assert primary.group.describe() == "9 measures × 40 questions"
    assert partial.group.describe() == "2 measures × 5 questions"
    assert [row[0].text for row in partial.scales.rows] == [
        "RANDOM",
        "popularity (partial: 2 measures × 5 questions)",
    ]
    # The per-measure table keeps every run's own questions: itemknn's 40 per measure.
    assert "n = 40" in section.main.rows[1][1].title
    # Paired differences: popularity against itemknn on their 10 shared questions, too few to test.
    assert section.paired is not None and section.paired.columns[2:4] == ["Assoc rule", "Mem item-item"]
    pop = next(r for r in section.paired.rows if r[0].text == "popularity")
    assert pop[1].text == "10" and pop[2].text.endswith("(n=5)") and pop[4].text == "–"
    rnd = next(r for r in section.paired.rows if r[0].text == "random")
    assert rnd[1].text == "360"  # the other full run: all 9 x 40 shared questions
    notes = " ".join(section.notes)
    assert "Partial runs: popularity (2 measures × 5 questions)" in notes
    assert "Small samples:" in notes and "smallest n = 5" in notes


def test_runs_over_the_same_questions_form_one_group(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    for name, seed in (("a", 1), ("b", 2)):
        write_run(suite / "runs" / name, model=name, dataset="ml-100k", measures=SUBSET,
                  policy=skilled(0.5), n=40, seed=seed)  # fmt: skip
    runs = [load_run(suite / "runs" / name) for name in ("a", "b")]
    (group,) = coverage_groups(runs)
    assert group.primary and [r.model for r in group.runs] == ["a", "b"]


def test_roles(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    kinds = (
        ("z", "m", "zero-shot", 1),
        ("c", "m", "cot", 1),
        ("o", "m", "zero-shot", 3),
        ("x", "oracle", "zero-shot", 1),
    )
    for name, model, variant, orders in kinds:
        write_run(suite / "runs" / name, model=model, dataset="d", measures=SUBSET, policy=skilled(0.5), n=4,
                  variant=variant, orders=orders)  # fmt: skip
    roles = {name: role_of(load_run(suite / "runs" / name)) for name in ("z", "c", "o", "x")}
    assert roles == {"z": Role.MAIN, "c": Role.VARIANT, "o": Role.ORDERS, "x": Role.CEILING}


def test_markdown_marks_partial_runs_once_under_one_runs_heading(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    _two_runs(suite)
    written = write_report([suite], tmp_path / "out")
    md = written["markdown"].read_text()
    assert md.count("## Runs") == 1 and "### Runs" not in md
    runs_table = md.split("## Runs", 1)[1]
    assert "| popularity | – | part | ml-100k | main | 10 | 5 | partial |" in runs_table
    assert "| itemknn | – | full |" in runs_table and "2025-01-01T10:05:00Z" in runs_table
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


def test_report_names_skipped_runs_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = make_suite(tmp_path)
    _two_runs(suite)
    (suite / "runs" / "vllm-foo__generate__zero-shot").mkdir()
    result = run_in_process(monkeypatch, tmp_path, "report", str(suite))
    assert result.returncode == 0, result.stderr
    assert "recworld: warning: skipped unfinished runs (no samples.jsonl):" in result.stderr
    assert "vllm-foo__generate__zero-shot" in result.stderr
    assert result.stdout.splitlines()[0].endswith("report.md")  # stdout: only the written paths


def test_the_ceiling_role_is_the_backend_rows_flag_not_a_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from recworld.models.registry import BACKENDS

    suite = make_suite(tmp_path)
    names = {"o": "oracle", "p": "sage", "t": "tallrec:lora-7", "r": "random"}
    for name, model in names.items():
        write_run(suite / "runs" / name, model=model, dataset="d", measures=SUBSET, policy=skilled(0.5), n=4)

    def roles() -> dict[str, Role]:
        return {name: role_of(load_run(suite / "runs" / name)) for name in names}

    # "sage" is no backend yet and "tallrec:lora-7" a model object's name: both compete.
    assert roles() == {"o": Role.CEILING, "p": Role.MAIN, "t": Role.MAIN, "r": Role.MAIN}
    monkeypatch.setitem(BACKENDS, "sage", replace(BACKENDS["random"], ceiling=True))  # a plugin's ceiling row
    monkeypatch.setitem(BACKENDS, "oracle", replace(BACKENDS["oracle"], ceiling=False))
    assert roles() == {"o": Role.MAIN, "p": Role.CEILING, "t": Role.MAIN, "r": Role.MAIN}
