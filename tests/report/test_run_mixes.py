"""Any set of runs reports: full, partial, ceiling, rank, variant, order and errored runs, any measures.

The invariant (``recworld.report``): ``recworld report`` renders every set of
run folders ``recworld eval`` can leave in a suite, and every run is a row of
the Runs table and of ``metrics.csv``, under a label no other run of its
dataset has (``recworld.reportkit.settings``). The mixes are drawn by hypothesis
(kinds × measure subsets × limits × settings); the checks read the written
files back with ``csv`` and plain string search, not with the report's code.
"""

from __future__ import annotations

import csv
import html
import io
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.cli import run_recworld
from helpers.run_mixes import MEASURES, RunSpec, run_specs, write_spec
from recworld.report import write_report


def _suite(root: Path) -> Path:
    import json

    shutil.rmtree(root, ignore_errors=True)
    (root / "runs").mkdir(parents=True)
    (root / "manifest.json").write_text(json.dumps({"schema": "recworld.manifest/1", "dataset": "ml-100k"}))
    return root


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def _check_report(suite: Path, dirs: list[Path], *, written: dict[str, Path] | None = None) -> None:
    written = written or write_report([suite], suite / "report")
    long_rows = _rows(written["metrics_csv"])
    by_folder: dict[str, set[str]] = {}
    labels = {r["run"] for r in long_rows}
    # Every run has rows in metrics.csv, and no two runs share a row label.
    assert len(labels) == len(dirs), (sorted(labels), [d.name for d in dirs])
    for row in long_rows:
        by_folder.setdefault(row["run"], set()).add(row["measure"])
    page = written["html"].read_text(encoding="utf-8")
    markdown = written["markdown"].read_text(encoding="utf-8")
    for label in labels:
        assert html.escape(label, quote=False) in page or html.escape(label) in page, label
    for run_dir in dirs:
        assert run_dir.name in page and run_dir.name in markdown.replace("\\", ""), run_dir.name
    # No two rows of one CSV say the same thing in their text columns (a pivot would merge them).
    keys = Counter((r["run"], r["dataset"], r["measure"]) for r in long_rows)
    assert max(keys.values()) == 1
    table = _rows(written["table_csv"])
    table_keys = Counter((r["run"], r["dataset"]) for r in table)
    assert max(table_keys.values()) == 1


def _quick_savefig(fig: Any, buf: Any, **_: Any) -> None:
    """An SVG shell instead of matplotlib's rasterising: every chart's own code still runs."""
    buf.write('<svg xmlns="http://www.w3.org/2000/svg" id="x"></svg>')


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(run_specs(), min_size=1, max_size=5))
def test_any_mix_of_runs_reports(tmp_path: Path, specs: list[RunSpec]) -> None:
    """Matplotlib's drawing of the figures is skipped here for speed; the cases below draw in full."""
    from matplotlib.figure import Figure

    suite = _suite(tmp_path / "suite")
    dirs = [write_spec(suite, spec) for spec in specs]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Figure, "savefig", _quick_savefig)
        _check_report(suite, dirs)


def test_ceiling_on_every_measure_beside_one_partial_model(tmp_path: Path) -> None:
    """The review's crash: the oracle on all measures (limit 20), one model on one measure (limit 5)."""
    suite = _suite(tmp_path / "suite")
    dirs = [
        write_spec(suite, RunSpec("ceiling", "oracle", MEASURES, 20, skill=1.0)),
        write_spec(suite, RunSpec("partial", "llamacpp:smollm2-135m", MEASURES[3:4], 5)),
    ]
    ran = run_recworld("report", str(suite))
    assert ran.returncode == 0  # the command the review ran
    names = {
        "markdown": "report.md",
        "html": "report.html",
        "metrics_csv": "metrics.csv",
        "table_csv": "table.csv",
    }
    _check_report(suite, dirs, written={k: suite / "report" / v for k, v in names.items()})


def test_runs_differing_only_in_system_are_distinct_rows_in_every_csv(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    model = "llamacpp:smollm2-135m"
    dirs = [
        write_spec(suite, RunSpec("full", model, MEASURES[:2], 10)),
        write_spec(suite, RunSpec("settings", model, MEASURES[:2], 10, settings={"system": "Be brief."})),
        write_spec(
            suite,
            RunSpec("settings", model, MEASURES[:2], 10, settings={"system": "You are a movie expert."}),
        ),
        write_spec(suite, RunSpec("settings", model, MEASURES[:2], 10, settings={"max_tokens": 8})),
    ]
    _check_report(suite, dirs)
    written = {"metrics_csv": suite / "report" / "metrics.csv", "table_csv": suite / "report" / "table.csv"}
    for path in written.values():
        rows = [r for r in _rows(path) if r["model"] == model]
        assert len({tuple(r.values()) for r in rows}) == len(rows)
        assert any("Be brief." in r["run"] for r in rows)
        assert any("max tokens 8" in r["run"] for r in rows)
        assert not any("__" in r["run"] for r in rows)  # labelled by settings, never by a folder hash


def test_a_run_with_no_answer_is_no_chart_legend_entry(tmp_path: Path) -> None:
    from recworld.report.charts import bar_chart, radar_chart
    from recworld.report.runs import label_runs, load_run

    suite = _suite(tmp_path / "suite")
    good = write_spec(suite, RunSpec("full", "random", MEASURES, 5))
    failed = write_spec(
        suite, RunSpec("errored", "openai:gpt-4o-mini", MEASURES, 5, errors=5, status="stopped")
    )
    runs = [load_run(good), load_run(failed)]
    label_runs(runs)
    for svg in (bar_chart("b", "ml-100k", runs, list(MEASURES)), radar_chart("r", "ml-100k", runs) or ""):
        assert "random" in svg and "gpt-4o-mini" not in svg
