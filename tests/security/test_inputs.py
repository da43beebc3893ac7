"""Malformed and hostile dataset files (review cases B10-B20, B25).

Each case writes the review's small ml-latest-small world (:mod:`worlds`) and
breaks one file the way the review did; the result is a load, or one error
line naming the file (and line, and field), exit 2, never a hang or a traceback.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.security.worlds import write_ml_latest_small


def _world(work: Path) -> Path:
    return write_ml_latest_small(work / "data" / "ml-latest-small")


def _info(folder: Path) -> tuple[int, dict[str, object] | None, str]:
    ran = run_recworld("data", "info", folder, "--json")
    return ran.returncode, (json.loads(ran.stdout) if ran.returncode == 0 else None), ran.stderr


def _one_line(code: int, err: str, *needles: str) -> None:
    assert code == 2 and err.startswith("recworld: error:") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, (needle, err)


def test_b10_a_ratings_file_linked_from_outside_is_read(work: Path) -> None:
    """Noted, no claim: the data folder's owner chose the link; it is read, never written."""
    data = _world(work)
    outside = work / "elsewhere" / "ratings.csv"
    outside.parent.mkdir()
    shutil.move(data / "ratings.csv", outside)
    (data / "ratings.csv").symlink_to(outside)
    code, info, err = _info(data)
    assert code == 0 and info is not None and info["interactions"] == 1500, err


def test_b11_crlf_files_load(work: Path) -> None:
    data = _world(work)
    for name in ("movies.csv", "ratings.csv"):
        path = data / name
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    code, info, err = _info(data)
    assert code == 0 and info is not None and info["interactions"] == 1500, err


def _header(path: Path, header: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(header + "\n" + "".join(lines[1:]))


def test_b12_a_duplicate_header_column_names_file_line_field(work: Path) -> None:
    data = _world(work)
    _header(data / "ratings.csv", "userId,movieId,rating,rating")
    code, _, err = _info(data)
    _one_line(code, err, "ratings.csv:1", "'rating'", "twice")


def test_b13_a_header_with_spaces_is_one_line(work: Path) -> None:
    data = _world(work)
    _header(data / "movies.csv", " movieId ,title,genres")
    code, _, err = _info(data)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err


def test_b14_a_utf16_file_is_one_line(work: Path) -> None:
    data = _world(work)
    movies = data / "movies.csv"
    movies.write_bytes(movies.read_text().encode("utf-16"))
    code, _, err = _info(data)
    _one_line(code, err, "movies.csv:1", "utf-8")


def test_b15_a_latin1_byte_names_its_line(work: Path) -> None:
    data = _world(work)
    movies = data / "movies.csv"
    lines = movies.read_bytes().splitlines(keepends=True)
    lines[5] = lines[5].replace(b"Movie", b"Caf\xe9 Movie", 1)
    movies.write_bytes(b"".join(lines))
    code, _, err = _info(data)
    _one_line(code, err, "movies.csv:6", "utf-8", "0xe9")


def test_b16_a_nul_byte_in_a_title_is_accepted(work: Path) -> None:
    data = _world(work)
    movies = data / "movies.csv"
    movies.write_bytes(movies.read_bytes().replace(b"Movie 20 ", b"Movie\x0020 ", 1))
    code, info, err = _info(data)
    assert (code == 0 and info is not None) or (code == 2 and err.count("\n") == 1), err


def test_b17_one_huge_line_is_one_bounded_error(work: Path) -> None:
    """The review's 512 MB line, scaled to 80 MB: past the 64 MiB line cap, refused at that line."""
    data = _world(work)
    ratings = data / "ratings.csv"
    lines = ratings.read_bytes().splitlines(keepends=True)
    with ratings.open("wb") as handle:
        handle.writelines(lines[:3])
        handle.write(b'1,"' + b"9" * (80 << 20) + b'",4.0,1000000\n')
        handle.writelines(lines[3:])
    code, _, err = _info(data)
    _one_line(code, err, "ratings.csv:4")


def test_b18_a_metadata_csv_of_100000_columns_is_bounded(work: Path) -> None:
    """The review's 1,000,000 columns (9.9 MB) took 4.2 s and 331 MB; a tenth here."""
    data = _world(work)
    meta = work / "meta.csv"
    with meta.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["movieId", *(f"c{i}" for i in range(100_000))])
        writer.writerow(["1", *("x" for _ in range(100_000))])
    ran = run_recworld("data", "info", data, "--metadata", meta)
    assert ran.returncode in (0, 2) and ran.stderr.count("\n") <= 3 and "Traceback" not in ran.stderr, (
        ran.stderr
    )


def test_b19_a_recbole_user_id_of_256_kib_builds_and_evaluates(work: Path) -> None:
    source = _world(work / "src")
    folder = work / "recbole"
    folder.mkdir()
    long_id = "u" * (256 << 10)
    with (source / "ratings.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    inter = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for row in rows:
        user = long_id if row["userId"] == "1" else row["userId"]
        inter.append(f"{user}\t{row['movieId']}\t{row['rating']}\t{row['timestamp']}")
    (folder / "big.inter").write_text("\n".join(inter) + "\n")
    with (source / "movies.csv").open() as handle:
        movies = list(csv.DictReader(handle))
    item = ["item_id:token\tmovie_title:token_seq\tclass:token_seq"]
    item += [f"{m['movieId']}\t{m['title']}\t{m['genres'].replace('|', ' ')}" for m in movies]
    (folder / "big.item").write_text("\n".join(item) + "\n")
    suite = work / "suite"
    argv = ["build", "--dataset", str(folder), "--out", str(suite), "--per-measure", "5"]
    ran = run_recworld(*argv, "--measures", "kg_movie_genre", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    ran = run_recworld("eval", str(suite), "--model", "random", "--no-progress")
    assert ran.returncode == 0, ran.stderr


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_b20_lunar_anchors_that_never_end_are_one_line(kind: str, work: Path) -> None:
    anchors = work / "anchors.csv"
    if kind == "fifo":
        os.mkfifo(anchors)
    else:
        anchors.symlink_to("/dev/zero")
    argv = ["lunar", "synth", "--anchors", anchors, "--out", work / "lun", "--model", "scripted"]
    ran = run_recworld(*argv, "--no-progress")
    _one_line(ran.returncode, ran.stderr, "anchors.csv")
    assert not (work / "lun").exists()


def test_b25_report_recomputes_missing_or_wrong_metrics(world: object, tmp_path: Path) -> None:
    from helpers.security.commands import World, copy

    assert isinstance(world, World)
    suite = copy(world.suite, tmp_path / "suite")
    (run_dir,) = (suite / "runs").iterdir()
    ran = run_recworld("report", str(run_dir), "--out", str(tmp_path / "good"))
    assert ran.returncode == 0, ran.stderr
    good = (tmp_path / "good" / "metrics.csv").read_text()
    (run_dir / "metrics.json").unlink()
    ran = run_recworld("report", str(run_dir), "--out", str(tmp_path / "missing"))
    assert ran.returncode == 0, ran.stderr
    (run_dir / "metrics.json").write_text('{"schema": "recworld.metrics/3", "measures": {"x": "wrong"}}')
    ran = run_recworld("report", str(run_dir), "--out", str(tmp_path / "wrong"))
    assert ran.returncode == 0, ran.stderr
    for name in ("missing", "wrong"):
        assert (tmp_path / name / "metrics.csv").read_text() == good
