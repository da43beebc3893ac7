"""One ownership rule for every output (review cases A0-A9; F1-F5).

A command writes into a folder that is new, empty, or carries recworld's
marker for it (or for a kind it joins: a report beside its run); never one it
merely recognises by file names. ``--force`` writes there and keeps every file
it does not write, at every depth. A symbolic link is never an output, and no
write follows one out of its folder. The marker comes only after success.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.security.commands import (
    EVIL_RATER,
    USER_DEEP,
    USER_FILE,
    WRITERS,
    World,
    Writer,
    copy,
    plant,
    prepare,
)
from helpers.security.fake_server import serve
from recworld.io import OUTPUT_MARKER, output_kinds

FOLDER_WRITERS = [w for w in WRITERS if w.name != "data-fetch"]  # data fetch writes only RECWORLD_HOME


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _foreign(folder: Path, files: dict[str, bytes]) -> dict[str, bytes]:
    for relative, data in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(data)
    return _snapshot(folder)


def _inputs_only(writer: Writer, world: World, work: Path) -> None:
    prepare(writer, world, work, with_previous=False)
    out = writer.out(work)
    if writer.inputs is not None and out.is_dir() and out != work / "lun":
        shutil.rmtree(out)  # an input copy that held an earlier output: the folder is the user's now
    _ratings(writer, world, out)


def _ratings(writer: Writer, world: World, folder: Path) -> None:
    """``lunar agreement`` reads its sheet from the folder it writes: put the filled sheet there."""
    if writer.name == "lunar-agreement":
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(world.lunar / "annotation" / "ratings.csv", folder / "ratings.csv")


@pytest.mark.slow
@pytest.mark.parametrize("writer", FOLDER_WRITERS, ids=lambda w: w.name)
def test_a_folder_recworld_did_not_write_is_refused_and_untouched(
    writer: Writer,
    world: World,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A0-A7 for every command: named files (report.md, run.json, manifest.json, sheet.csv) make no claim."""
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    _inputs_only(writer, world, tmp_path)
    out = writer.out(tmp_path)
    if out == tmp_path / "lun" and out.is_dir():  # a LUNAR root: without its marker, anyone's files
        (out / OUTPUT_MARKER).unlink()
    names = {
        "report.md": b"# my notes\n",
        "run.json": b'{"other": "tool"}\n',
        "manifest.json": b'{"name": "My PWA"}\n',
    }
    before = _foreign(out, {**names, "sheet.csv": b"mine\n", USER_DEEP: b"deep\n"})
    ran = run_recworld(*writer.argv(world, tmp_path))
    err = ran.stderr
    assert ran.returncode == 2 and err.startswith("recworld: error:") and err.count("\n") == 1, err
    assert _snapshot(out) == before and not (out / OUTPUT_MARKER).exists()


@pytest.mark.slow
@pytest.mark.parametrize("writer", [w for w in FOLDER_WRITERS if w.force], ids=lambda w: w.name)
def test_force_writes_and_keeps_every_file_it_does_not_write(
    writer: Writer,
    world: World,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A5/F4: ``--force`` kept top-level files but deleted ``dataset/my_raw_ratings.csv``; now every depth."""
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    _inputs_only(writer, world, tmp_path)
    out = writer.out(tmp_path)
    mine = {USER_FILE: b"keep\n", "dataset/my_raw_ratings.csv": b"data\n", USER_DEEP: b"deep\n"}
    _foreign(out, mine)
    ran = run_recworld(*writer.argv(world, tmp_path), writer.force)
    assert ran.returncode == 0, ran.stderr
    assert {k: (out / k).read_bytes() for k in mine} == mine
    assert output_kinds(out)  # marked, now that it has succeeded


@pytest.mark.parametrize("writer", FOLDER_WRITERS, ids=lambda w: w.name)
def test_a_symbolic_link_is_never_an_output(
    writer: Writer,
    world: World,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A4b/F3: ``eval --out LINK`` wrote through the link into the folder it named."""
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    _inputs_only(writer, world, tmp_path)
    out = writer.out(tmp_path)
    target = tmp_path / "elsewhere"
    if out.exists():
        out.rename(target)  # the real folder moves away; the link takes its name
    else:
        target.mkdir()
    (target / USER_FILE).write_bytes(b"not yours\n")
    _ratings(writer, world, target)
    before = _snapshot(target)
    out.symlink_to(target, target_is_directory=True)
    argv = [*writer.argv(world, tmp_path), *([writer.force] if writer.force else [])]
    ran = run_recworld(*argv)
    assert ran.returncode == 2 and "symbolic link" in ran.stderr, ran.stderr
    assert _snapshot(target) == before


def test_a1_a2_report_files_or_a_run_json_make_no_report_folder(world: World, work: Path) -> None:
    """F1: ``_claim`` took any folder with a ``report.md`` or ``run.json`` as an earlier report."""
    for name, files in {
        "plain": {"notes.txt": b"mine\n"},  # A0
        "docs1": {"report.md": b"# my notes\n", "table.csv": b"user table\n"},  # A1
        "docs2": {"run.json": b'{"other":"tool"}\n', "metrics.csv": b"user metrics\n"},  # A2
    }.items():
        folder = work / "foreign" / name
        before = _foreign(folder, files)
        ran = run_recworld("report", str(world.suite), "--out", str(folder))
        assert ran.returncode == 2 and ran.stderr.count("\n") == 1 and "--force" in ran.stderr, ran.stderr
        assert _snapshot(folder) == before
    ran = run_recworld("report", str(world.suite), "--out", str(work / "foreign" / "docs1"), "--force")
    assert ran.returncode == 0, ran.stderr
    assert (work / "foreign" / "docs1" / "table.csv").read_bytes() != b"user table\n"
    assert output_kinds(work / "foreign" / "docs1") == {"report"}


def test_a3_a_failed_synth_leaves_no_marker_and_a_pwa_is_refused(work: Path) -> None:
    """F2: ``manifest.json`` alone made a LUNAR run, and a failed synth marked the folder anyway."""
    webapp = work / "foreign" / "webapp"
    before = _foreign(webapp, {"manifest.json": b'{"name":"My PWA"}\n', "index.html": b"<html></html>\n"})
    synth = [
        "lunar",
        "synth",
        "--anchors",
        "lunar-demo",
        "--model",
        "scripted",
        "--users",
        "1",
        "--weeks",
        "1",
    ]
    ran = run_recworld(*synth, "--out", webapp, "--no-progress")
    assert ran.returncode == 2 and "--force" in ran.stderr and _snapshot(webapp) == before
    ran = run_recworld(*synth, "--out", work / "new", "--no-progress")
    assert ran.returncode == 3  # a scripted model cannot speak the LUNAR schemas: the synthesis fails
    assert not (work / "new" / OUTPUT_MARKER).exists() and output_kinds(work / "new") == frozenset()
    ran = run_recworld("lunar", "queries", work / "new", "--model", "scripted")
    assert ran.returncode == 2 and "lunar synth has not finished there" in ran.stderr


def test_a4_eval_refuses_a_users_results_folder(evil_suite: Path, work: Path) -> None:
    """F3: ``eval --out`` wrote into any folder (the user's metrics.json and samples.jsonl replaced)."""
    folder = work / "foreign" / "evalout"
    before = _foreign(folder, {"metrics.json": b'{"mine":true}\n', "samples.jsonl": b"mine\n"})
    ran = run_recworld("eval", str(evil_suite), "--model", "random", "--out", str(folder), "--no-progress")
    assert ran.returncode == 2 and "--force" in ran.stderr and _snapshot(folder) == before


def test_a5_build_force_keeps_a_file_in_a_subfolder_it_writes(work: Path) -> None:
    from helpers.security.worlds import write_ml_latest_small

    data = write_ml_latest_small(work / "data" / "ml-latest-small")
    folder = work / "foreign" / "buildforce"
    mine = {"notes.txt": b"keep\n", "dataset/my_raw_ratings.csv": b"data\n"}
    before = _foreign(folder, mine)
    argv = ["build", "--dataset", str(data), "--out", str(folder), "--per-measure", "5"]
    argv += ["--measures", "kg_movie_genre", "--no-progress"]
    ran = run_recworld(*argv)
    assert ran.returncode == 2 and _snapshot(folder) == before  # A5b
    ran = run_recworld(*argv, "--force")
    assert ran.returncode == 0, ran.stderr
    assert {k: (folder / k).read_bytes() for k in mine} == mine
    assert (folder / "dataset" / "interactions.parquet").is_file()
    ran = run_recworld(*argv)  # now a suite: rebuilt without --force, the files still kept
    assert ran.returncode == 0 and {k: (folder / k).read_bytes() for k in mine} == mine


def test_a6_a7_annotate_and_agreement_refuse_foreign_files(world: World, tmp_path: Path) -> None:
    """F5: ``lunar annotate --out`` and ``lunar agreement`` overwrote form.html and agreement.json."""
    run_dir = copy(world.lunar, tmp_path / "run1")
    raters = tmp_path / "foreign" / "raters"
    before = _foreign(raters, {"form.html": b"mine\n", "sheet.csv": b"mine\n"})
    ran = run_recworld("lunar", "annotate", str(run_dir), "--out", str(raters))
    assert ran.returncode == 2 and "--force" in ran.stderr and _snapshot(raters) == before
    agree = tmp_path / "foreign" / "agree"
    shutil.copy(run_dir / "annotation" / "ratings.csv", agree.parent / "ratings.csv")
    before = _foreign(agree, {"agreement.json": b'{"mine":1}\n', "agreement.csv": b"my,analysis\n"})
    shutil.move(agree.parent / "ratings.csv", agree / "ratings.csv")
    before["ratings.csv"] = (agree / "ratings.csv").read_bytes()
    ran = run_recworld("lunar", "agreement", str(agree / "ratings.csv"), "--out", str(agree))
    assert ran.returncode == 2 and "--out" in ran.stderr and _snapshot(agree) == before
    ran = run_recworld("lunar", "agreement", str(agree / "ratings.csv"))  # the default: beside
    assert ran.returncode == 0, ran.stderr
    assert {k: v for k, v in _snapshot(agree).items() if not k.startswith("agreement/")} == before
    assert (agree / "agreement" / "agreement.json").is_file()
    shutil.rmtree(agree / "agreement")
    ran = run_recworld("lunar", "agreement", str(agree / "ratings.csv"), "--out", str(run_dir))
    assert ran.returncode == 0, ran.stderr  # into the LUNAR run it feeds: a kind the agreement joins
    assert output_kinds(run_dir) == {"lunar-run", "lunar-agreement"}
    with (run_dir / "agreement.csv").open(newline="") as handle:  # X4/F17: the rater =HYPERLINK(...)
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert "'" + EVIL_RATER in cells and not any(c.startswith(("=", "+", "@")) for c in cells)


def test_a8_dry_runs_send_and_write_nothing(evil_suite: Path, work: Path, key_env: str) -> None:
    before = _snapshot(evil_suite)
    with serve("ok") as server:
        ran = run_recworld(
            "eval",
            str(evil_suite),
            "--model",
            "openai:x",
            "--base-url",
            server.url,
            "--dry-run",
            "--no-progress",
        )
        assert ran.returncode == 0, ran.stderr
        synth = [
            "lunar",
            "synth",
            "--anchors",
            "lunar-demo",
            "--out",
            str(work / "lun"),
            "--model",
            "openai:x",
        ]
        ran = run_recworld(*synth, "--base-url", server.url, "--dry-run")
        assert ran.returncode == 0, ran.stderr
        assert server.seen == []
    assert _snapshot(evil_suite) == before and not (work / "lun").exists()
    assert sorted(os.listdir(work)) == []


def test_a9_a_re_export_replaces_only_its_own_files(evil_suite: Path, work: Path) -> None:
    out = work / "kill" / "exp"
    assert run_recworld("export", str(evil_suite), "--to", "hf", "--out", str(out)).returncode == 0
    first = _snapshot(out)
    mine = plant(out)
    assert run_recworld("export", str(evil_suite), "--to", "hf", "--out", str(out)).returncode == 0
    again = _snapshot(out)
    assert {k: again[k] for k in first} == first and {k: again[k] for k in mine} == mine
    marker = json.loads((out / OUTPUT_MARKER).read_text())
    assert USER_FILE not in marker["files"] and "recworld-export.json" in marker["files"]


def test_no_write_follows_a_link_planted_inside_an_output(evil_suite: Path, work: Path) -> None:
    """A link inside a run folder (its log, its journal, its cache) never carries a write out of it."""
    out = work / "run"
    argv = ["eval", str(evil_suite), "--model", "random", "--out", str(out), "--no-progress"]
    assert run_recworld(*argv).returncode == 0
    victim = work / "victim.txt"
    victim.write_bytes(b"untouched\n")
    for name in ("recworld.log", ".samples.journal.jsonl", "cache.sqlite"):
        (out / name).unlink()
        (out / name).symlink_to(victim)
        ran = run_recworld(*argv, "--limit", "5", "--measures", "kg_movie_genre")
        assert ran.returncode == 2 and "symbolic link" in ran.stderr, (name, ran.stderr)
        assert victim.read_bytes() == b"untouched\n"
        (out / name).unlink()


def test_a_rebuild_carries_a_users_link_as_a_link(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite holding links (one to a folder outside, one where a run would be) is rebuilt around them."""
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    suite = copy(world.suite, tmp_path / "suite")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs.txt").write_bytes(b"theirs\n")
    (suite / "linked").symlink_to(outside, target_is_directory=True)
    (suite / "runs" / "a-link").symlink_to(outside, target_is_directory=True)
    argv = ["build", "--dataset", str(world.data), "--out", str(suite), "--per-measure", "5"]
    ran = run_recworld(*argv, "--measures", "kg_movie_genre", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    assert (suite / "linked").is_symlink() and (suite / "runs" / "a-link").is_symlink()
    assert (
        sorted(os.listdir(outside)) == ["theirs.txt"] and (outside / "theirs.txt").read_bytes() == b"theirs\n"
    )


def test_rerun_on_own_output_keeps_users_files(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule, stated once more for a run folder: an eval rerun keeps a user's file beside the samples."""
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    out = tmp_path / "run"
    argv = ["eval", str(world.suite), "--model", "random", "--out", str(out), "--no-progress"]
    ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr
    mine = plant(out)
    ran = run_recworld(*argv, "--limit", "2")
    assert ran.returncode == 0, ran.stderr
    assert {k: (out / k).read_bytes() for k in mine} == mine
    assert output_kinds(out) == {"eval-run"}
