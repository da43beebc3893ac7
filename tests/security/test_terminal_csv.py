"""Text that leaves for a terminal or a spreadsheet (review cases X3, X4, X6, X7; F17, F18).

X7 runs ``data info`` and ``build`` on a real pseudo-terminal, as the review
did with ``script -qc``: rich then draws its tables and progress with escape
sequences of its own, and only those may reach the terminal.
"""

from __future__ import annotations

import csv
import io
import os
import pty
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.security.worlds import write_ml_latest_small
from recworld.console.terminal import strip_control
from recworld.csvsafe import csv_cell, csv_dict_text, csv_text

HOSTILE_NAME = "rich[bold red]BOLD[link=https:evil.example]L\x1b]0;PWNED-TITLE\x07\x1b[2J\x1bc\x9b31m\rEND"
# What a data name may never put on a terminal: an OSC (window title), BEL, screen clear, reset, a C1 CSI.
FORBIDDEN = (b"\x1b]", b"\x07", b"\x1b[2J", b"\x1bc", "\x9b".encode())


def _on_a_terminal(argv: list[str], cwd: Path) -> bytes:
    """Run ``recworld ARGV`` with stdout and stderr on a pseudo-terminal; everything it wrote there."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "LINES": "50", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    child = subprocess.Popen(
        [sys.executable, "-m", "recworld.cli", *argv], stdout=follower, stderr=follower, cwd=cwd, env=env
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            child.kill()
            raise AssertionError("no output for 60 s")
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert child.wait(timeout=60) in (0, 2, 3)
    return b"".join(chunks)


@pytest.fixture(scope="module")
def hostile_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_ml_latest_small(tmp_path_factory.mktemp("term") / HOSTILE_NAME)


@pytest.mark.parametrize("command", ["info", "build", "error"])
def test_x7_control_sequences_in_a_folder_name_never_reach_the_terminal(
    hostile_folder: Path, work: Path, command: str
) -> None:
    if command == "info":
        argv = ["data", "info", str(hostile_folder)]
    elif command == "build":
        argv = ["build", "--dataset", str(hostile_folder), "--out", str(work / "suite"), "--per-measure", "5"]
        argv += ["--measures", "kg_movie_genre", "--progress"]
    else:
        argv = ["data", "info", str(hostile_folder / "missing")]
    shown = _on_a_terminal(argv, work)
    assert b"rich[bold" in shown  # X6: markup printed as typed (a table title may wrap after it)
    for sequence in FORBIDDEN:
        assert sequence not in shown, (sequence, shown[:600])


def test_x7_piped_output_carries_no_escape_at_all(hostile_folder: Path, work: Path) -> None:
    for argv in (["data", "info", str(hostile_folder)], ["data", "info", str(hostile_folder / "nope")]):
        ran = run_recworld(*argv)
        shown = ran.stdout + ran.stderr
        assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown
        assert "rich[bold red]BOLD" in shown
    out = run_recworld("data", "info", hostile_folder, "--json").stdout
    assert "\\u001b]0;PWNED-TITLE\\u0007" in out and "\\u009b" in out  # JSON keeps the value, escaped


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain\ttab\nline", "plain\ttab\nline"),
        ("a\x1b[31mred\x1b[0m", "ared"),
        ("t\x1b]0;title\x07x", "tx"),
        ("t\x1b]8;;https://e\x1b\\link\x1b]8;;\x1b\\", "tlink"),
        ("\x1bPdcs\x1b\\after", "after"),
        ("c1\x9b2Jcsi\x9dosc\x9c", "c1csi"),
        ("bell\x07 back\x08 cr\r del\x7f nul\x00", "bell back cr del nul"),
        ("lone escape \x1b", "lone escape "),
        ("unterminated \x1b]0;title", "unterminated 0;title"),
    ],
)
def test_strip_control(text: str, shown: str) -> None:
    assert strip_control(text) == shown


FORMULAS = (
    '=HYPERLINK("http://evil.example","alice")',
    "+1+cmd|' /C calc'!A0",
    "-2+3+cmd",
    "@SUM(A1)",
    "\tx",
    "\rx",
)


@pytest.mark.parametrize("text", FORMULAS)
def test_x4_every_formula_cell_is_quoted(text: str) -> None:
    assert csv_cell(text) == "'" + text
    rows = list(csv.reader(io.StringIO(csv_text([["rater", "score"], [text, -0.5]]))))
    assert rows == [["rater", "score"], ["'" + text, "-0.5"]]
    written = csv_dict_text(["rater", "score"], [{"rater": text, "score": 3}])
    assert list(csv.DictReader(io.StringIO(written))) == [{"rater": "'" + text, "score": "3"}]


@pytest.mark.parametrize("value", ["-0.25", "1e-3", "+2", "plain", " =1+1", "a=b", "", 3, -4.5, None, True])
def test_numbers_and_plain_text_pass(value: object) -> None:
    assert csv_cell(value) == value


def test_x3_report_csvs_quote_a_formula_dataset_name(work: Path) -> None:
    name = '=HYPERLINK("x","y")'
    data = write_ml_latest_small(work / "data" / name, users=30, movies=30, ratings=300)
    suite = work / "suite"
    argv = ["build", "--dataset", str(data), "--out", str(suite), "--per-measure", "5"]
    assert run_recworld(*argv, "--measures", "kg_movie_genre", "--no-progress").returncode == 0
    assert run_recworld("eval", str(suite), "--model", "random", "--no-progress").returncode == 0
    ran = run_recworld("report", str(suite), "--out", str(work / "report"))
    assert ran.returncode == 0, ran.stderr
    for name_csv in ("metrics.csv", "table.csv"):
        text = (work / "report" / name_csv).read_text()
        cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
        assert all(not re.match(r"[=+\-@\t\r]", c) or re.fullmatch(r"-?[\d.e+-]+", c) for c in cells), cells
        assert "'" + name in cells or any(c.startswith("'=HYPERLINK") for c in cells)
    shutil.rmtree(work / "report")
