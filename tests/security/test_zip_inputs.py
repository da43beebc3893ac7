"""Hostile zips for ``data fetch --from`` and ``build --dataset`` (review cases B1-B6; F19, F20).

A zip unpacks only the files a format reads, within a size cap; a zip whose
contents turn out unusable leaves no unpacked copy in ``RECWORLD_HOME`` and
its error names the zip and the member, never the internal cache folder.
"""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.security.worlds import write_ml_latest_small
from recworld.data import zips


def _raw_cache() -> Path:
    return Path(os.environ["RECWORLD_HOME"]) / "cache" / "raw"


def _cache_entries() -> list[str]:
    raw = _raw_cache()
    return sorted(p.name for p in raw.iterdir()) if raw.is_dir() else []


def _dataset(tmp: Path) -> Path:
    return write_ml_latest_small(tmp / "src" / "ml-latest-small", users=30, movies=40, ratings=400)


def _zip(
    path: Path, members: dict[str, bytes], *, folder: Path | None = None, symlinks: tuple[str, ...] = ()
) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        if folder is not None:
            for file in sorted(folder.iterdir()):
                zf.write(file, f"{folder.name}/{file.name}")
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            if name in symlinks:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, data, zipfile.ZIP_DEFLATED)
    return path


def _fetch(archive: Path) -> tuple[int, str]:
    ran = run_recworld("data", "fetch", "ml-latest-small", "--from", str(archive))
    return ran.returncode, ran.stderr


def test_b1_a_traversing_member_is_refused(work: Path) -> None:
    archive = _zip(work / "traversal.zip", {"../../../..zips/ESCAPED.txt": b"x"}, folder=_dataset(work))
    code, err = _fetch(archive)
    assert code == 2 and "unsafe path in zip" in err
    assert not any(p.name == "ESCAPED.txt" for p in work.parent.rglob("ESCAPED.txt"))
    assert _cache_entries() == []


def test_b2_an_absolute_member_is_refused(work: Path) -> None:
    target = work / "ABSOLUTE.txt"
    archive = _zip(work / "absolute.zip", {str(target): b"x"}, folder=_dataset(work))
    code, err = _fetch(archive)
    assert code == 2 and "unsafe path in zip" in err
    assert not target.exists() and _cache_entries() == []


def test_b3_a_broken_line_names_the_zip_and_leaves_nothing(work: Path) -> None:
    """F19: the unpacked copy stayed in cache/raw and the message named that internal path."""
    data = _dataset(work)
    ratings = (data / "ratings.csv").read_text().splitlines()
    ratings[2] = "1,2,not-a-rating,oops"
    (data / "ratings.csv").write_text("\n".join(ratings) + "\n")
    archive = _zip(work / "malformed-content.zip", {}, folder=data)
    for argv in (
        ["data", "fetch", "ml-latest-small", "--from", str(archive)],
        ["build", "--dataset", str(archive), "--out", str(work / "suite"), "--per-measure", "5"],
    ):
        ran = run_recworld(*argv)
        assert ran.returncode == 2
        assert f"{archive}:ml-latest-small/ratings.csv:3" in ran.stderr, ran.stderr
        assert "cache" not in ran.stderr and os.environ["RECWORLD_HOME"] not in ran.stderr
        assert ran.stderr.count("\n") == 1  # one line
        assert _cache_entries() == []


def test_b4_a_zip_of_no_dataset_is_refused_without_unpacking(work: Path) -> None:
    archive = _zip(work / "not-a-dataset.zip", {"readme.txt": b"hello"})
    code, err = _fetch(archive)
    assert code == 2 and "no file that any dataset format reads" in err and str(archive) in err
    assert _cache_entries() == []


def test_b5_a_symlink_member_is_written_as_its_text(work: Path) -> None:
    data = _dataset(work)
    members = {
        "ml-latest-small/ratings.csv": b"/etc/passwd",
        "ml-latest-small/movies.csv": (data / "movies.csv").read_bytes(),
    }
    archive = _zip(work / "symlink.zip", members, symlinks=("ml-latest-small/ratings.csv",))
    stage = work / "stage"
    stage.mkdir()
    zips.unpack(archive, stage)
    unpacked = stage / "ml-latest-small" / "ratings.csv"
    assert not unpacked.is_symlink() and unpacked.read_bytes() == b"/etc/passwd"
    code, err = _fetch(archive)
    assert code == 2 and "ratings.csv" in err
    assert _cache_entries() == []


def test_b6_members_no_format_reads_are_never_unpacked(work: Path) -> None:
    """F20: a valid dataset plus a 1 GiB zeros.bin put 1.1 GB in the cache (256 MiB here: the same path)."""
    archive = work / "bomb.zip"
    _zip(archive, {}, folder=_dataset(work))
    with (
        zipfile.ZipFile(archive, "a", zipfile.ZIP_DEFLATED) as zf,
        zf.open("ml-latest-small/zeros.bin", "w") as out,
    ):
        chunk = bytes(1 << 20)
        for _ in range(256):
            out.write(chunk)
    assert archive.stat().st_size < 2 << 20
    code, err = _fetch(archive)
    assert code == 0, err
    unpacked = [p for p in _raw_cache().rglob("*") if p.is_file()]
    assert sorted(p.name for p in unpacked) == ["links.csv", "movies.csv", "ratings.csv"]
    assert sum(p.stat().st_size for p in unpacked) < 1 << 20


def test_the_unpacked_size_is_capped(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dataset files that unpack past the cap are refused before one byte is written."""
    archive = _zip(work / "big.zip", {}, folder=_dataset(work))
    monkeypatch.setattr(zips, "MAX_UNPACKED_BYTES", 4096)
    code, err = _fetch(archive)
    assert code == 2 and "more than 4096" in err
    assert _cache_entries() == []


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("ml-100k/u.data", True),
        ("u.item", True),
        ("ml-25m/ratings.csv", True),
        ("ml-25m/genome-scores.csv", False),
        ("netflix/training_set/mv_0000001.txt", True),
        ("training_set/mv_0000001.txt", True),
        ("a/b/ratings.csv", False),
        ("zeros.bin", False),
        ("ml-100k/u.data/", True),
        ("Ratings.CSV", False),
    ],
)
def test_only_members_a_format_reads_are_wanted(name: str, read: bool) -> None:
    assert zips.wanted(name) is read
