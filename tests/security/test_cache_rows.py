"""A damaged response cache (review cases G1-G5; F26).

G1-G3 damage the file itself: one line naming the cache, exit 2. G4 is a
garbage write-ahead log, which SQLite ignores. G5 is a valid database whose
rows hold the wrong shapes: each is a miss (answered again), never a traceback.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from helpers.cli import run_recworld


def _first_run(suite: Path, out: Path) -> list[str]:
    argv = ["eval", str(suite), "--model", "random", "--out", str(out), "--no-progress"]
    ran = run_recworld(*argv, "--limit", "3")
    assert ran.returncode == 0, ran.stderr
    for name in (".samples.journal.jsonl", "samples.jsonl"):  # answers come from the cache alone now
        (out / name).unlink()
    return [*argv, "--limit", "5"]


@pytest.mark.parametrize(
    ("case", "damage", "message"),
    [
        ("G1", lambda p: p.write_bytes(b"garbage!" * 16 + p.read_bytes()[128:]), "not a database"),
        ("G2", lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]), "malformed"),
        ("G3", lambda p: (p.unlink(), p.mkdir()), "unable to open"),
    ],
)
def test_a_damaged_cache_file_is_one_line(
    case: str, damage: object, message: str, evil_suite: Path, work: Path
) -> None:
    out = work / case
    again = _first_run(evil_suite, out)
    for extra in ("cache.sqlite-wal", "cache.sqlite-shm"):
        (out / extra).unlink(missing_ok=True)
    damage(out / "cache.sqlite")  # type: ignore[operator]
    ran = run_recworld(*again)
    err = ran.stderr
    assert ran.returncode == 2 and err.startswith("recworld: error:") and err.count("\n") == 1, err
    assert message in err and "cache" in err and "Traceback" not in err


def test_g4_a_garbage_wal_is_ignored(evil_suite: Path, work: Path) -> None:
    out = work / "G4"
    again = _first_run(evil_suite, out)
    (out / "cache.sqlite-wal").write_bytes(b"\x00garbage" * 512)
    ran = run_recworld(*again)
    assert ran.returncode == 0, ran.stderr


def test_g5_a_corrupt_row_is_a_miss(evil_suite: Path, work: Path) -> None:
    """F26: ``{"text": 5, "usage": "x"}`` in a row was an AttributeError traceback, exit 1."""
    out = work / "G5"
    again = _first_run(evil_suite, out)
    with sqlite3.connect(out / "cache.sqlite") as db:
        changed = db.execute("""UPDATE responses SET value = '{"text": 5, "usage": "x"}'""").rowcount
    assert changed >= 3
    ran = run_recworld(*again)
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    assert "cache" in ran.stderr  # the warning names what was wrong
    assert len((out / "samples.jsonl").read_text().splitlines()) == 10
