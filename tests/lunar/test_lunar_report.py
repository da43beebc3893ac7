"""The LUNAR report as a reader sees it: real HTML tables, figures, reasons for empty parts, the viewer.

Folders are written record by record (:mod:`helpers.report_folders`), so every expected number is
computed here by brute force from the scores the test chose.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from helpers.cli import run_recworld
from helpers.report_folders import RunSpec, query_id, read_page, write_folder, write_run
from recworld import lunar
from recworld.lunar.answering.ablate import ABLATE_DIR, ABLATE_RUN, K_SCALING, MULTI_FULL, AblateRun
from recworld.lunar.report.estimates import MIN_N
from recworld.lunar.report.viewer import MAX_CHARS

HIGH = [(4, 4)] * 6 + [(5, 4)] * 6  # Avg 4.25, n = 12
LOW = [(2, 2)] * 12  # Avg 2.0


def _report(root: Path) -> lunar.ReportResult:
    return lunar.write_lunar_report(lunar.ReportConfig(root=root))


def _avg(pairs: list[tuple[int, int]]) -> float:
    return float(np.mean([(pc + pd) / 2 for pc, pd in pairs]))


def _two_models(root: Path) -> Path:
    """Model a: more personal, less private; model b: the reverse; c: beaten by b on both axes."""
    return write_folder(
        root,
        [
            RunSpec("openai:a", "none", LOW, privacy=[5] * 12),  # a none point would beat b: never drawn
            RunSpec("openai:a", "full", HIGH, privacy=[2] * 6 + [3] * 6, offences={0: ["profiling"]}),
            RunSpec("openai:b", "full", [(3, 3)] * 12, privacy=[4] * 12),
            RunSpec("openai:c", "full", [(2, 3)] * 12, privacy=[4] * 11 + [3]),
        ],
    )


def test_tables_figures_and_files_agree(tmp_path: Path) -> None:
    root = _two_models(tmp_path)
    result = _report(root)
    page = read_page(root / "report.html")
    rows = {(r["model"], r["context"]): r for r in page.table("personalisation")}
    assert set(rows) == {
        ("openai:a", "none"),
        ("openai:a", "full"),
        ("openai:b", "full"),
        ("openai:c", "full"),
    }
    cell = rows[("openai:a", "full")]["Avg"]
    mean, low, high = (float(x) for x in re.findall(r"\d+\.\d+", cell))
    assert mean == pytest.approx(_avg(HIGH), abs=0.005) and low < mean < high and high - low > 0.05
    # All twelve at 2.0: an interval still (never [2.00, 2.00]) and the lower end is the floor's side.
    low_cell = rows[("openai:a", "none")]["Avg"]
    assert low_cell.startswith("2.00 [") and "[2.00, 2.00]" not in low_cell
    # report.csv is the same computation.
    csv_rows = {(r["model"], r["context"]): r for r in csv.DictReader((root / "report.csv").open())}
    for key, row in rows.items():
        assert row["Avg"].startswith(f"{float(csv_rows[key]['avg']):.2f}")
        if csv_rows[key]["avg_low"]:
            assert (
                f"[{float(csv_rows[key]['avg_low']):.2f}, {float(csv_rows[key]['avg_high']):.2f}]"
                in row["Avg"]
            )
    # Markdown shows the same cell texts.
    md = (root / "report.md").read_text()
    assert cell in md and "| openai:a | full | openai:judge | 12 / 12 |" in md
    # The judge is named, in the header and in the table.
    assert "openai:judge" in " ".join(page.notes + [" ".join(r) for r in page.tables["personalisation"]])
    assert "answer models" in (root / "report.html").read_text()
    assert {"fig-avg-by-context", "fig-privacy-quadrant", "fig-jsd"} <= set(page.figures)
    assert [r.model for r in result.rows] == ["openai:a", "openai:a", "openai:b", "openai:c"]


def test_privacy_figure_is_one_point_per_model_with_the_front_over_models(tmp_path: Path) -> None:
    root = _two_models(tmp_path)
    result = _report(root)
    page = read_page(root / "report.html")
    points = page.table("privacy-models")
    assert [p["model"] for p in points] == ["openai:a", "openai:b", "openai:c"]  # one per model, no context
    # Brute force: a (4.25, 2.5), b (3.0, 4.0), c (2.5, 3.92): c is beaten by b on both axes.
    xy = {"openai:a": (_avg(HIGH), 2.5), "openai:b": (3.0, 4.0), "openai:c": (2.5, (4 * 11 + 3) / 12)}
    front = {
        m
        for m, (x, y) in xy.items()
        if not any(a >= x and b >= y and (a, b) != (x, y) for a, b in xy.values())
    }
    assert front == {"openai:a", "openai:b"}
    assert {p["model"] for p in points if p["Pareto"] == "yes"} == front
    assert {p["model"]: p["region"] for p in points} == {
        "openai:a": "aggressive",
        "openai:b": "balanced",
        "openai:c": "conservative",
    }
    assert points[0]["answers with an offence"].startswith("1/12 (8%) [")
    # The none context (privacy 5.0 at Avg 2.0) is in the per-context table, never a point.
    contexts = page.table("privacy-contexts")
    assert ("openai:a", "none") in {(r["model"], r["context"]) for r in contexts}
    assert [p.model for p in result.points] == ["openai:a", "openai:b", "openai:c"]
    labels = [t for t in page.figure_text["fig-privacy-quadrant"] if t.startswith("openai:")]
    assert sorted(labels) == ["openai:a", "openai:b", "openai:c"]  # one label per model in the figure
    written = list(csv.DictReader((root / "privacy.csv").open()))
    assert [(r["model"], r["pareto"]) for r in written] == [
        ("openai:a", "True"),
        ("openai:b", "True"),
        ("openai:c", "False"),
    ]


def test_n_of_one_says_n_too_small_everywhere(tmp_path: Path) -> None:
    root = write_folder(tmp_path, [RunSpec("openai:a", "full", [(5, 5)], privacy=[5])])
    _report(root)
    page = read_page(root / "report.html")
    (row,) = page.table("personalisation")
    assert row["Avg"] == "5.00 (n=1, n too small)" and row["PC"] == "5.00 (n=1, n too small)"
    assert "[1.00, 1.00]" not in (root / "report.html").read_text()
    (point,) = page.table("privacy-models")
    assert point["privacy"] == "5.00 (n=1, n too small)"
    assert point["answers with an offence"] == "0/1 (0%) [0%, 98%]"  # exact interval at n = 1
    (written,) = csv.DictReader((root / "report.csv").open())
    assert written["avg"] == "5.0" and written["avg_low"] == "" and written["avg_high"] == ""
    assert any("One model" in n for n in page.notes)
    assert MIN_N > 1


def test_no_privacy_judgments_say_why_and_what_to_run(tmp_path: Path) -> None:
    root = write_folder(tmp_path, [RunSpec("openai:a", "none", [(3, 3)] * 3)], privacy_on=False)
    _report(root)
    page = read_page(root / "report.html")
    reason = next(n for n in page.notes if n.startswith("No privacy judgments"))
    assert "--no-privacy" in reason and "Full-context answers" in reason and "--context full" in reason
    assert "fig-privacy-quadrant" not in page.figures and "privacy-models" not in page.tables
    assert "privacy" in page.sections  # the section is there, with its reason
    assert reason in " ".join((root / "report.md").read_text().replace("`", "").split())


def test_privacy_only_on_other_contexts_makes_no_point(tmp_path: Path) -> None:
    root = write_folder(tmp_path, [RunSpec("openai:a", "rag", [(3, 3)] * 3, privacy=[4, 4, 4])])
    result = _report(root)
    page = read_page(root / "report.html")
    assert result.points == [] and "fig-privacy-quadrant" not in page.figures
    assert any("No Full-context privacy judgments" in n for n in page.notes)
    assert [r["context"] for r in page.table("privacy-contexts")] == ["rag"]


def test_a_model_whose_answers_all_failed(tmp_path: Path) -> None:
    root = write_folder(
        tmp_path,
        [
            RunSpec("openai:ok", "full", [(4, 4)] * 3, privacy=[4, 4, 4]),
            RunSpec("openai:broken", "full", ["failed"] * 3, privacy=[None] * 3),
        ],
    )
    _report(root)
    page = read_page(root / "report.html")
    rows = {r["model"]: r for r in page.table("personalisation")}
    assert (
        rows["openai:broken"]["Avg"] == "1.00 (n=3, n too small)"
        and rows["openai:broken"]["answer errors"] == "3"
    )
    assert any(n.startswith("openai:broken / full: every answer failed (3 of 3)") for n in page.notes)
    points = {p["model"]: p for p in page.table("privacy-models")}
    assert points["openai:broken"]["privacy"] == "–" and points["openai:broken"]["Pareto"] == ""
    assert any(n.startswith("openai:broken: no Full-context answer has both") for n in page.notes)
    assert [t for t in page.figure_text["fig-privacy-quadrant"] if t.startswith("openai:")] == [
        "openai:ok"
    ]  # not drawn


def test_judge_errors_are_left_out_and_counted(tmp_path: Path) -> None:
    answers: list[tuple[int, int] | str] = [(4, 4), "judge-error", (2, 2)]
    root = write_folder(tmp_path, [RunSpec("openai:a", "none", answers)], privacy_on=False)
    (row,) = _report(root).rows
    assert (row.judged, row.judge_errors, row.avg.mean) == (2, 1, 3.0)
    (cell,) = read_page(root / "report.html").table("personalisation")
    assert cell["judge errors"] == "1" and cell["scored / n"] == "2 / 3"


def test_hostile_names_and_texts_are_escaped(tmp_path: Path) -> None:
    evil = "openai:<script>alert(1)</script>$x$"
    long = "<b>bold</b> " + "word " * MAX_CHARS
    root = write_folder(tmp_path, [RunSpec(evil, "full", [(4, 4)] * 2, privacy=[3, 3], answer_text=long)])
    _report(root)
    text = (root / "report.html").read_text()
    assert "<script>alert" not in text and "<b>bold" not in text
    page = read_page(root / "report.html")
    assert page.table("personalisation")[0]["model"] == evil  # shown as typed
    assert evil in page.figure_text["fig-privacy-quadrant"]  # the figure label: no mathtext, no markup
    data = json.loads(next(s for s in page.scripts if '"cells"' in s))
    (key,) = [k for k in data["cells"] if evil in k]
    entry = data["cells"][key]
    answer = entry["rows"][0]["answer"]
    assert answer.startswith("<b>bold</b>")  # JSON carries the text; the page shows it as text
    assert (
        len(answer) < MAX_CHARS + 200 and "the whole text is in eval/" in answer and "answers.jsonl" in answer
    )


def test_viewer_entries_behind_every_score_cell(tmp_path: Path) -> None:
    root = _two_models(tmp_path)
    _report(root)
    page = read_page(root / "report.html")
    cells = json.loads(next(s for s in page.scripts if '"cells"' in s))["cells"]
    views = page.views["personalisation"]
    header = page.tables["personalisation"][0]
    for row in views[1:]:
        for column in ("PC", "PD", "Avg"):
            assert row[header.index(column)] in cells
    entry = cells["|openai:a|full"]
    assert entry["total"] == 12 and entry["title"] == "openai:a · full"
    first = entry["rows"][0]
    assert first["id"] == query_id(0) and first["query"] == "Where should I eat tonight?"
    assert "orders ramen in the evening" in first["rubric"] and "Any restaurant will do." in first["rubric"]
    assert first["judgment"].startswith("PC 4, PD 4, Avg 4.0") and first["outcome"] == "judged"
    assert first["privacy"].startswith("score 2") and "profiling (severe)" in first["privacy"]


def test_no_dataset_and_no_ablation_say_so(tmp_path: Path) -> None:
    root = write_folder(tmp_path, [RunSpec("openai:a", "none", [(3, 3)])], dataset=False, privacy_on=False)
    _report(root)
    page = read_page(root / "report.html")
    assert any(n.startswith("No synthesised dataset in this folder") for n in page.notes)
    assert any("`lunar ablate` has not run" in n or "lunar ablate has not run" in n for n in page.notes)
    assert json.loads((root / "quality.json").read_text()) == {}


def test_ablation_table_curve_and_what_could_not_run(tmp_path: Path) -> None:
    root = write_folder(tmp_path, [RunSpec("openai:a", "curated", [(3, 3)] * 2)], privacy_on=False)
    for k, score in ((0, 2), (1, 3), (2, 4)):
        write_run(
            root / ABLATE_DIR / f"k{k}",
            RunSpec("openai:a", "curated", [(score, score)] * 12),
            privacy_on=False,
        )
    skipped = {MULTI_FULL: "no multi-domain query: all 2 queries' evidence spans one domain"}
    AblateRun(model="openai:a", judge="openai:judge", k_max=2, ran={"k0": 12}, skipped=skipped).write(
        root / ABLATE_DIR / ABLATE_RUN
    )
    _report(root)
    page = read_page(root / "report.html")
    (row,) = page.table("ablation")
    assert row["Avg by k"] == "k0=2.00 k1=3.00 k2=4.00" and row["multi-domain Full-E"] == "–"
    assert (
        "Not run: multi-domain Full-E. No multi-domain query: all 2 queries' evidence spans one domain."
        in page.notes
    )
    assert "fig-k-scaling" in page.figures
    cells = json.loads(next(s for s in page.scripts if '"cells"' in s))["cells"]
    assert cells["k1|openai:a|curated"]["total"] == 12
    assert K_SCALING == "k-scaling"


def test_the_report_is_reproducible(tmp_path: Path) -> None:
    root = _two_models(tmp_path)
    _report(root)
    first = {n: (root / n).read_bytes() for n in ("report.html", "report.md", "report.csv", "privacy.csv")}
    _report(root)
    assert {n: (root / n).read_bytes() for n in first} == first


def test_cli_prints_the_files_and_json(tmp_path: Path) -> None:
    root = _two_models(tmp_path)
    r = run_recworld("lunar", "report", str(root))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == str(root / "report.html") and "# LUNAR report" not in r.stdout
    r = run_recworld("lunar", "report", str(root), "--json")
    data = json.loads(r.stdout)
    assert [p["model"] for p in data["privacy_points"]] == ["openai:a", "openai:b", "openai:c"]
    assert len(data["rows"]) == 4


def test_a_runs_settings_read_like_lrworlds(tmp_path: Path) -> None:
    """The runs table's settings are the kit's setting line, the one LRWorld's run labels use."""
    from recworld.reportkit.settings import describe_settings

    root = write_folder(tmp_path, [RunSpec("openai:a", "full", HIGH), RunSpec("openai:a", "rag", HIGH)])
    _report(root)
    shown = {r["context"]: r["settings"] for r in read_page(root / "report.html").table("runs")}
    for context in ("full", "rag"):
        config = json.loads((root / "eval" / "openai-a" / context / "run.json").read_text())["config"]
        options = {k: v for k, v in config["options"][context].items() if v is not None}
        settings = {"max_tokens": config["answer_max_tokens"], **({"options": options} if options else {})}
        assert shown[context] == describe_settings(settings)
    assert shown["rag"].endswith("; options k=30")
