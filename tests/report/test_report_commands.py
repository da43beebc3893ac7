"""``recworld runs``, ``recworld compare``, ``report --format latex`` and a piped report's progress lines."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.run_mixes import MEASURES, RunSpec, write_spec
from recworld.report.latex import latex_text


def _suite(root: Path) -> Path:
    (root / "runs").mkdir(parents=True)
    (root / "manifest.json").write_text(json.dumps({"schema": "recworld.manifest/1", "dataset": "ml-100k"}))
    return root


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    suite = _suite(tmp_path / "suite")
    model = "llamacpp:smollm2-135m"
    plain = write_spec(suite, RunSpec("full", model, MEASURES[:2], 25, skill=0.9, seed=1))
    brief = write_spec(
        suite, RunSpec("settings", model, MEASURES[:2], 20, skill=0.2, settings={"system": "Be brief."})
    )
    (suite / "runs" / "unfinished").mkdir()
    return suite, plain, brief


def test_runs_lists_each_run_with_its_settings(two_runs: tuple[Path, Path, Path]) -> None:
    suite, plain, brief = two_runs
    ran = run_recworld("runs", str(suite), "--json")
    assert ran.returncode == 0, ran.stderr
    rows = {r["folder"]: r for r in json.loads(ran.stdout)["runs"]}
    assert set(rows) == {plain.name, brief.name, "unfinished"}
    assert "Be brief." in rows[brief.name]["settings"] and rows[plain.name]["settings"] == ""
    assert rows[brief.name]["n"] == 40 and rows["unfinished"]["status"] == "unfinished"
    ran = run_recworld("runs", str(suite))
    assert ran.returncode == 0, ran.stderr
    table = ran.stdout.splitlines()
    assert table[0].split("\t")[:2] == ["folder", "model"] and len(table) == 4


def test_compare_pairs_two_runs_on_their_shared_questions(two_runs: tuple[Path, Path, Path]) -> None:
    _, plain, brief = two_runs
    ran = run_recworld("compare", str(plain), str(brief), "--json")
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    assert data["n_common"] == 40 and data["only_a"] == 10 and data["only_b"] == 0  # 20 shared per measure
    for m in data["measures"].values():
        assert m["n"] == 20 and m["diff"] == pytest.approx(m["score_a"] - m["score_b"])
        assert m["ci_low"] <= m["diff"] <= m["ci_high"]
    assert "Be brief." in data["b"]["run"]
    ran = run_recworld("compare", str(plain), str(brief))
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert "McNemar p" in out and "macro A - B over 2 measures" in out
    ran = run_recworld("compare", str(plain), str(plain))
    assert ran.returncode == 2, ran.stderr


def test_latex_tables_are_booktabs_with_intervals(two_runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    suite, _, _ = two_runs
    ran = run_recworld("report", str(suite), "--out", str(tmp_path / "rep"), "--format", "latex")
    assert ran.returncode == 0, ran.stderr
    tex = (tmp_path / "rep" / "report.tex").read_text(encoding="utf-8")
    assert tex.count(r"\begin{tabular}") == tex.count(r"\bottomrule") >= 3
    assert r"\toprule" in tex and r"\midrule" in tex
    assert re.search(r"\d\.\d{3} \{\\scriptsize \[\d\.\d{3}, \d\.\d{3}\]\}", tex)  # score with its interval
    assert r"system \#" in tex and "smollm2-135m" in tex  # data escaped (the prompt's hash sign)


@pytest.mark.parametrize("text", ["a_b & 50% #1 {x} ~ ^ \\ $", "openai:<svg>", "x\x00y"])
def test_latex_text_leaves_no_live_special_character(text: str) -> None:
    out = latex_text(text)
    bare = re.sub(
        r"\\(textbackslash|textasciitilde|textasciicircum|textless|textgreater|textbar)\{\}", "", out
    )
    bare = re.sub(r"\\[&%$#_{}]", "", bare)
    assert not re.search(r"[&%$#_{}~^\\<>\x00]", bare), out


def test_piped_report_says_what_it_does(two_runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    suite, _, _ = two_runs
    ran = run_recworld("report", str(suite), "--out", str(tmp_path / "rep"))
    assert ran.returncode == 0, ran.stderr
    lines = [x for x in ran.stderr.splitlines() if x.startswith("recworld: progress: report: ")]
    assert any("scoring runs 1/2" in x for x in lines)
    assert any(re.search(r"report steps \d+/\d+ .*writing table\.csv", x) for x in lines)
    assert any("left" in x for x in lines)  # an estimate once steps are counted
