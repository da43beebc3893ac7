"""write_report and ``recworld report`` on synthetic runs in the runner's formats."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.synthetic_runs import (
    MOVIE_MEASURES,
    PRODUCT_MEASURES,
    always_first,
    make_suite,
    skilled,
    write_run,
)
from recworld.errors import DataError
from recworld.report import LONG_COLUMNS, write_report
from recworld.report.runs import default_out_dir, gather_run_dirs
from recworld.report.tables import fmt_interval
from recworld.scoring import MetricsRecord, load_samples, score_samples


def test_suite_report_files_and_tables(movie_report: tuple[Path, dict[str, Path]]) -> None:
    movie_suite, written = movie_report
    assert default_out_dir([movie_suite]) == movie_suite.resolve() / "report"
    assert set(written) == {"markdown", "html", "metrics_csv", "table_csv"}
    md = written["markdown"].read_text(encoding="utf-8")
    # Paper layout: measures grouped by scale, RANDOM row with chance, models as rows.
    assert "| *scale* | *association* | *personalization* |" in md
    assert re.search(r"\| RANDOM \| 0\.100 \| 0\.100 \| 0\.100 \| 0\.100 \| 0\.100 \| 0\.250 ", md)
    for model in ("openai:gpt-4o-mini", "llamacpp:smollm2-135m", "popularity"):
        assert f"| {model} |" in md
    assert "Skipped unfinished runs (no samples.jsonl): unfinished" in md
    # The best model of each column is bold; the always-"A" model shows its position bias.
    gpt_row = next(
        line
        for line in md.splitlines()
        if line.startswith("| openai:gpt-4o-mini | 0.") or line.startswith("| openai:gpt-4o-mini | **")
    )
    assert gpt_row.count("**") >= 2
    bias_row = next(line for line in md.splitlines() if line.startswith("| llamacpp:smollm2-135m — ml-100k"))
    assert "**100%**" in bias_row
    assert "Paired differences against openai:gpt-4o-mini" in md


def test_main_table_cells_match_metrics(movie_report: tuple[Path, dict[str, Path]]) -> None:
    movie_suite, written = movie_report
    md = written["markdown"].read_text(encoding="utf-8")
    metrics = score_samples(load_samples(movie_suite / "runs" / "pop" / "samples.jsonl"))
    row = next(line for line in md.splitlines() if line.startswith("| popularity |"))
    cells = [c.strip().strip("*") for c in row.strip("|").split("|")][1:]
    assert len(cells) == len(MOVIE_MEASURES)
    for measure, cell in zip(MOVIE_MEASURES, cells, strict=True):
        m = metrics.measures[measure]
        assert cell == fmt_interval(m.score, m.ci_low, m.ci_high, m.questions)


def test_long_csv_round_trip(movie_report: tuple[Path, dict[str, Path]]) -> None:
    movie_suite, written = movie_report
    with written["metrics_csv"].open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0].keys()) == LONG_COLUMNS
    assert len(rows) == 3 * len(MOVIE_MEASURES)
    for run, model in (
        ("gpt", "openai:gpt-4o-mini"),
        ("smol", "llamacpp:smollm2-135m"),
        ("pop", "popularity"),
    ):
        metrics = MetricsRecord.read(movie_suite / "runs" / run / "metrics.json")
        for measure, m in metrics.measures.items():
            row = next(r for r in rows if r["model"] == model and r["measure"] == measure)
            assert int(row["n"]) == m.n
            stored = (m.score, m.ci_low, m.ci_high, m.missed_rate, m.chance)
            for key, value in zip(
                ("score", "ci_low", "ci_high", "missed_rate", "chance"), stored, strict=True
            ):
                assert float(row[key]) == value  # repr() floats round-trip exactly
            assert (row["scale"], row["factor"], row["format"]) == (m.scale, m.factor, m.format)
            assert (row["dataset"], row["mode"], row["variant"]) == ("ml-100k", "generate", "zero-shot")


def test_wide_csv(movie_report: tuple[Path, dict[str, Path]]) -> None:
    movie_suite, written = movie_report
    with written["table_csv"].open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["model"] for r in rows] == [
        "RANDOM",
        "openai:gpt-4o-mini",
        "popularity",
        "llamacpp:smollm2-135m",
    ]
    assert float(rows[0]["assoc_rule"]) == pytest.approx(0.1)
    assert float(rows[0]["kg_movie_cast"]) == pytest.approx(0.25)
    metrics = score_samples(load_samples(movie_suite / "runs" / "smol" / "samples.jsonl"))
    assert float(rows[3]["mem_item_item"]) == metrics.measures["mem_item_item"].score
    assert metrics.overall is not None
    assert float(rows[3]["overall"]) == pytest.approx(metrics.overall.score)


def test_two_datasets_get_two_main_tables(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    write_run(
        suite / "runs" / "a",
        model="m1",
        dataset="ml-100k",
        measures=MOVIE_MEASURES[:3],
        policy=skilled(0.5),
        n=10,
    )
    write_run(
        suite / "runs" / "b",
        model="m1",
        dataset="amazon",
        measures=PRODUCT_MEASURES,
        policy=skilled(0.5),
        n=10,
    )
    md = write_report([suite], tmp_path / "out")["markdown"].read_text(encoding="utf-8")
    assert "### Results on LRWorld (ml-100k)" in md
    assert "### Results on LRWorld (amazon)" in md
    assert "Taxo (prod, leaf)" in md


def test_duplicate_labels_are_disambiguated(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    write_run(
        suite / "runs" / "first", model="m", dataset="d", measures=("kg_movie_genre",), policy=skilled(0.5)
    )
    write_run(
        suite / "runs" / "second",
        model="m",
        dataset="d",
        measures=("kg_movie_genre",),
        policy=always_first(),
        mode="loglik",
    )
    write_run(
        suite / "runs" / "third", model="m", dataset="d", measures=("kg_movie_genre",), policy=skilled(0.1)
    )
    md = write_report([suite], tmp_path / "out")["markdown"].read_text(encoding="utf-8")
    assert "| m (loglik) |" in md
    assert "| m · first |" in md and "| m · third |" in md


def test_run_dirs_and_default_out(tmp_path: Path, movie_suite: Path) -> None:
    runs = [movie_suite / "runs" / "gpt", movie_suite / "runs" / "pop"]
    assert default_out_dir(runs) == movie_suite.resolve() / "report"
    loose = tmp_path / "loose"
    write_run(loose / "r1", model="m", dataset="d", measures=("kg_movie_genre",), policy=skilled(0.5), n=5)
    assert default_out_dir([loose / "r1"]) == (loose / "r1").resolve()
    found, skipped = gather_run_dirs([movie_suite, movie_suite / "runs" / "gpt"])
    assert [p.name for p in found] == ["gpt", "pop", "smol"]
    assert [p.name for p in skipped] == ["unfinished"]


def test_bad_inputs_are_data_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such directory"):
        gather_run_dirs([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="neither a run directory"):
        gather_run_dirs([tmp_path / "empty"])
    bad = tmp_path / "bad"
    write_run(bad, model="m", dataset="d", measures=("kg_movie_genre",), policy=skilled(0.5), n=3)
    lines = (bad / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["parsed_index"] = 9
    lines[1] = json.dumps(record)
    (bad / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(
        DataError, match=r"bad/samples\.jsonl:2: field 'parsed_index': 9 is not an option index"
    ):
        write_report([bad], tmp_path / "out")


def test_cli(movie_suite: Path, tmp_path: Path) -> None:
    ran = run_recworld("report", str(movie_suite))
    assert ran.returncode == 0, ran.stderr
    printed = ran.stdout.split()
    assert str(movie_suite.resolve() / "report" / "report.html") in printed
    out = tmp_path / "elsewhere"
    runs = movie_suite / "runs"
    assert run_recworld("report", runs / "gpt", runs / "smol", "--out", out).returncode == 0
    assert (out / "report.md").is_file()
    ran = run_recworld("report", str(tmp_path / "nope"))
    assert ran.returncode == 2
    assert "no such directory" in ran.stderr


def test_report_is_deterministic(movie_report: tuple[Path, dict[str, Path]], tmp_path: Path) -> None:
    movie_suite, a = movie_report
    b = write_report([movie_suite], tmp_path / "b")
    for key in a:
        assert a[key].read_bytes() == b[key].read_bytes(), key


def test_fmt_interval() -> None:
    assert fmt_interval(0.5534, 0.491, 0.612, 40) == "0.553 [0.491, 0.612]"
    assert fmt_interval(0.0, 0.0, 0.168, 20) == "0.000 [0.000, 0.168]"  # exact bounds, never "± 0.000"
    assert fmt_interval(0.4, 0.05, 0.85, 5) == "0.400 (n=5)"  # under the minimum n: the n, not an interval
    assert fmt_interval(None, None, None) == "–"
    assert fmt_interval(0.25, None, None) == "0.250"


def test_report_reuses_the_runs_bootstrap_seed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    measures = ("kg_movie_genre", "kg_movie_cast")
    samples = write_run(run, model="m", dataset="d", measures=measures, policy=skilled(0.5), n=200)
    stored = score_samples(samples, seed=7)
    stored.write(run / "metrics.json")
    md = write_report([run], tmp_path / "out")["markdown"].read_text(encoding="utf-8")
    overall = stored.overall
    assert overall is not None and overall.score is not None
    scales = md.split("### Scales (d)")[1].split("###")[0]
    row = next(line for line in scales.splitlines() if line.startswith("| m |"))
    assert row.rstrip(" |").endswith(f"{overall.score:.3f} [{overall.ci_low:.3f}, {overall.ci_high:.3f}]")
    default = score_samples(samples, seed=0).overall
    assert default is not None
    assert (default.ci_low, default.ci_high) != (overall.ci_low, overall.ci_high)  # the check has teeth
    # A measure's exact interval needs no seed at all.
    assert default.ci_low is not None and stored.measures == score_samples(samples, seed=0).measures
