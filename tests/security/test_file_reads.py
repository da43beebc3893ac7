"""Every file the CLI reads is size-capped and refuses devices and FIFOs (review cases B7-B9, B21-B24; F21).

``--config /dev/zero`` hung while memory grew, and so did ``--prices`` and
``scripted:``. The cases that once hung run in a child process forked from
this one (:func:`helpers.security.forked.forked`: warm, no second of imports)
with a timeout, so a regression fails here instead of hanging the suite; a
directory or a dangling link cannot hang, so those run in process. The child
matrices keep a slice in ``make test-fast`` (every flag, both kinds) and mark
the rest slow.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from helpers.cli import recworld_exit_code, run_recworld
from helpers.security.forked import forked
from helpers.security.worlds import write_ml_latest_small
from recworld.capped import SETTINGS_LIMIT, read_capped, read_capped_text
from recworld.errors import DataError
from recworld.export.common import load_suite
from recworld.io import iter_json_lines, read_json_object


def _cli(argv: list[str], cwd: Path, timeout: float = 60) -> tuple[int, str, float]:
    """``recworld ARGV`` from ``cwd`` in a child forked from here (warm); failed and killed at ``timeout``."""

    def command() -> int:
        os.chdir(cwd)
        return recworld_exit_code(*argv)

    return forked(command, cwd.with_name(f"{cwd.name}.stderr"), timeout=timeout)


def _special(work: Path, name: str, kind: str) -> Path:
    path = work / name
    if kind == "device":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)
    return path


# The fast suite passes every flag and file type once, devices and FIFOs alternating (two of
# each kind); the other four pairs are marked slow and run in ``make test``.
SETTINGS_CASES = [
    pytest.param(flag, name, kind, id=f"{flag}-{name}-{kind}", marks=() if fast else pytest.mark.slow)
    for flag, name, kind, fast in (
        ("--config", "zero.toml", "device", True),
        ("--config", "zero.toml", "fifo", False),
        ("--prices", "zero.csv", "device", False),
        ("--prices", "zero.csv", "fifo", True),
        ("--prices", "zero.jsonl", "device", True),
        ("--prices", "zero.jsonl", "fifo", False),
        ("--model", "zero.json", "device", False),
        ("--model", "zero.json", "fifo", True),
    )
]


@pytest.mark.parametrize(("flag", "name", "kind"), SETTINGS_CASES)
def test_b22_settings_files_that_never_end_are_refused(
    evil_suite: Path, work: Path, flag: str, name: str, kind: str
) -> None:
    path = _special(work, name, kind)
    argv = ["eval", str(evil_suite), "--limit", "1", "--measures", "kg_movie_genre", "--no-progress"]
    if flag == "--model":
        argv += ["--model", f"scripted:{path}"]
    elif flag == "--prices":
        argv += [
            "--model",
            "openai:x",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--dry-run",
            "--prices",
            str(path),
        ]
    else:
        argv += ["--config", str(path)]
    code, err, seconds = _cli(argv, work)
    assert code == 2, err
    expected = "is a device" if kind == "device" else "is a FIFO"
    assert expected in err and str(path) in err and seconds < 30
    assert "Traceback" not in err


def test_settings_files_are_capped(work: Path) -> None:
    config = work / "huge.toml"
    config.write_bytes(b"# padding\n" * (SETTINGS_LIMIT // 10 + 1))
    with pytest.raises(DataError, match=f"larger than {SETTINGS_LIMIT} bytes"):
        read_capped_text(config, limit=SETTINGS_LIMIT)
    with pytest.raises(DataError, match="is a directory"):
        read_capped(work, limit=10)
    with pytest.raises(DataError, match="config file not found"):
        read_capped(work / "none.toml", limit=10, missing="config file not found")
    (work / "small.toml").write_text("limit = 3\n")
    assert read_capped_text(work / "small.toml", limit=SETTINGS_LIMIT) == "limit = 3\n"


# The fast suite refuses a device as the manifest and a FIFO as a question file; the other two
# pairs (the same reader, the other kind) are slow.
SUITE_CASES = [
    pytest.param(kind, victim, id=f"{kind}-{victim}", marks=() if fast else pytest.mark.slow)
    for kind, victim, fast in (
        ("device", "manifest.json", True),
        ("device", "questions/kg_movie_genre.jsonl", False),
        ("fifo", "manifest.json", False),
        ("fifo", "questions/kg_movie_genre.jsonl", True),
    )
]


@pytest.mark.parametrize(("kind", "victim"), SUITE_CASES)
def test_suite_files_that_never_end_are_refused(evil_suite: Path, work: Path, kind: str, victim: str) -> None:
    """A shared suite's manifest or question file pointing at a device or FIFO: one line, no hang."""
    suite = work / "suite"
    shutil.copytree(evil_suite, suite)
    (suite / victim).unlink()
    _special(suite, victim, kind)
    code, err, seconds = _cli(["eval", str(suite), "--model", "random", "--no-progress"], work)
    assert code == 2 and victim.rsplit("/", maxsplit=1)[-1] in err and seconds < 30, err
    with pytest.raises(DataError, match="is a FIFO" if kind == "fifo" else "is a device"):
        load_suite(suite)


def test_a_json_lines_record_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from recworld import capped

    path = tmp_path / "samples.jsonl"
    path.write_text('{"a": 1}\n{"b": "' + "x" * 100 + '"}\n')
    monkeypatch.setattr(capped.iter_lines, "__kwdefaults__", {"limit": 64})
    with pytest.raises(DataError, match=r"samples\.jsonl:2: line larger than 64 bytes"):
        list(iter_json_lines(path))


def test_read_json_object_refuses_what_is_not_a_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "manifest.json")
    with pytest.raises(DataError, match="is a FIFO"):
        read_json_object(tmp_path / "manifest.json")


@pytest.mark.parametrize("kind", ["fifo", "device", "dir", "dangling"])
def test_b7_b9_dataset_files_that_are_not_files(work: Path, kind: str) -> None:
    data = write_ml_latest_small(work / "data" / "base", users=20, movies=20, ratings=120)
    (data / "ratings.csv").unlink()
    if kind == "fifo":
        os.mkfifo(data / "ratings.csv")
    elif kind == "device":
        (data / "ratings.csv").symlink_to("/dev/zero")
    elif kind == "dir":
        (data / "ratings.csv").mkdir()
    else:
        (data / "ratings.csv").symlink_to(work / "gone.csv")
    argv = ["build", "--dataset", str(data), "--out", str(work / "suite")]
    if kind in ("fifo", "device"):  # these once hung: a subprocess with a timeout
        code, err, seconds = _cli(argv, work)
    else:  # a directory or a dangling link cannot hang a read: in process
        started = time.monotonic()
        ran = run_recworld(*argv)
        code, err = ran.returncode, ran.stderr
        seconds = time.monotonic() - started
    assert code == 2 and seconds < 30 and "Traceback" not in err, err


def test_b21_metadata_from_a_device_is_one_line(work: Path) -> None:
    data = write_ml_latest_small(work / "data" / "base", users=20, movies=20, ratings=120)
    code, err, _ = _cli(
        ["build", "--dataset", str(data), "--metadata", "/dev/zero", "--out", str(work / "s")], work
    )
    assert code == 2 and "metadata file not found" in err


def test_b23_symlink_loops_do_not_hang(work: Path) -> None:
    data = write_ml_latest_small(work / "data" / "base", users=20, movies=20, ratings=120)
    (data / "up").symlink_to("..")
    (data / "self").symlink_to(".")
    code, err, seconds = _cli(["data", "info", str(data)], work)
    assert code == 0 and seconds < 30, err


@pytest.mark.parametrize(
    ("line", "message"), [("{broken", "invalid JSON"), ("[" * 70 + "]" * 70, "JSON nested deeper")]
)
def test_b24_a_broken_samples_line_is_named(evil_suite: Path, work: Path, line: str, message: str) -> None:
    out = work / "run"
    ran = run_recworld("eval", str(evil_suite), "--model", "random", "--out", str(out), "--no-progress")
    assert ran.returncode == 0, ran.stderr
    rows = (out / "samples.jsonl").read_text().splitlines()
    rows[1] = line
    (out / "samples.jsonl").write_text("\n".join(rows) + "\n")
    ran = run_recworld("report", str(out), "--out", str(work / "report"))
    assert ran.returncode == 2 and f"samples.jsonl:2: {message}" in ran.stderr, ran.stderr
    assert json.loads((out / "run.json").read_text())["status"] != "running"
