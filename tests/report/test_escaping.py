"""Reports never execute or interpret content: CSV formulas, mathtext and Rich markup stay text."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from helpers.synthetic_runs import make_suite, skilled, write_run
from recworld.csvsafe import csv_cell
from recworld.report import write_report
from recworld.report.charts import bar_chart, radar_chart
from recworld.report.runs import label_runs, load_run

HOSTILE = ('=HYPERLINK("http://x")', "+1+cmd", "-2+3", "@SUM(A1)", "\tlead", "\rlead")


@pytest.mark.parametrize("text", HOSTILE)
def test_formula_cells_get_a_quote(text: str) -> None:
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["-0.25", "0.5", "plain", "", 3, None, "a=b"])
def test_numbers_and_plain_text_are_left_alone(value: object) -> None:
    assert csv_cell(value) == value


def test_report_csvs_escape_hostile_model_names(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    for i, name in enumerate(HOSTILE[:4]):
        write_run(suite / "runs" / f"r{i}", model=name, dataset="=evil()", measures=("kg_movie_genre",),
                  policy=skilled(0.5), n=5, seed=i)  # fmt: skip
    written = write_report([suite], tmp_path / "report")
    for kind in ("metrics_csv", "table_csv"):
        rows = list(csv.reader(io.StringIO(written[kind].read_text(encoding="utf-8"))))
        cells = [c for row in rows[1:] for c in row]
        assert "'=evil()" in cells and "'@SUM(A1)" in cells and "'-2+3" in cells
        # No text cell a spreadsheet would evaluate; numbers (even negative) are data.
        for cell in cells:
            if cell[:1] in ("=", "+", "-", "@"):
                float(cell)


def _runs_named(tmp_path: Path, names: tuple[str, ...]) -> list:  # type: ignore[type-arg]
    runs = []
    measures = ("kg_movie_genre", "kg_movie_cast", "mem_item_item", "assoc_rule")
    for i, name in enumerate(names):
        path = tmp_path / f"run{i}"
        write_run(path, model=name, dataset="ml", measures=measures, policy=skilled(0.5), n=5, seed=i)
        runs.append(load_run(path))
    label_runs(runs)
    return runs


def test_chart_labels_are_not_mathtext(tmp_path: Path) -> None:
    runs = _runs_named(tmp_path, ("price $x^2$ model", "plain"))
    bar = bar_chart("bar", "$\\alpha$ set", runs, ["kg_movie_genre", "mem_item_item"])
    # As one <text> element; mathtext would draw glyphs and keep the string only in a comment.
    assert "price $x^2$ model</text>" in bar and "($\\alpha$ set)</text>" in bar
    radar = radar_chart("radar", "ml", runs)
    assert radar is not None and "price $x^2$ model</text>" in radar


def test_a_model_name_starting_with_an_underscore_is_in_the_chart_legends(tmp_path: Path) -> None:
    # matplotlib hides an artist labelled "_..." from a legend it builds itself.
    runs = _runs_named(tmp_path, ("_private model", "plain"))
    bar = bar_chart("bar", "ml", runs, ["kg_movie_genre", "mem_item_item"])
    radar = radar_chart("radar", "ml", runs)
    assert radar is not None
    for svg in (bar, radar):
        assert ">_private model</text>" in svg and ">plain</text>" in svg and ">chance</text>" in svg


def test_rich_markup_in_a_model_name_prints_literally(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from recworld.evaluation.eval_output import print_scores, run_summary

    run = tmp_path / "run"
    write_run(run, model="openai:[red]boom[/red]", dataset="ml", measures=("kg_movie_genre",),
              policy=skilled(0.5), n=5)  # fmt: skip
    header = json.loads((run / "run.json").read_text())
    header["started"] = header["finished"] = 0
    (run / "run.json").write_text(json.dumps(header))
    monkeypatch.setenv("COLUMNS", "200")
    print_scores(run_summary(run))
    assert "openai:[red]boom[/red]" in capsys.readouterr().out


def test_rich_markup_in_the_progress_description_prints_literally(monkeypatch: pytest.MonkeyPatch) -> None:
    from recworld.runner.progress import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    bar = ProgressBar(2, "openai:[bold]m[/bold] generate", enabled=True)
    assert bar.enabled
    bar.advance(error=False, retries=0)
    bar.close()
    assert "openai:[bold]m[/bold]" in screen.getvalue()


def test_a_prompt_cannot_break_out_of_the_viewer_data(tmp_path: Path) -> None:
    from recworld.report import write_report
    from recworld.reportkit.viewer import script_json

    hostile = '</script><script>document.title="pwned"</script><!-- & >'
    text = script_json({"prompt": hostile})
    assert "<" not in text and ">" not in text and json.loads(text) == {"prompt": hostile}

    suite = tmp_path / "suite"
    write_run(suite / "runs" / "a", model="m", dataset="ml", measures=("kg_movie_genre",),
              policy=skilled(0.5), n=5)  # fmt: skip
    samples = (suite / "runs" / "a" / "samples.jsonl").read_text()
    (suite / "runs" / "a" / "samples.jsonl").write_text(samples.replace('"..."', json.dumps(hostile)))
    (suite / "manifest.json").write_text("{}")
    html = write_report([suite / "runs" / "a"], tmp_path / "out")["html"].read_text()
    # One data tag per dataset and the viewer's own script: the prompt added no element.
    assert html.count("<script") == 2 and html.count("</script>") == 2
    assert 'document.title="pwned"' not in html and "\\u003c/script\\u003e" in html
