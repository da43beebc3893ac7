"""Samples are journaled in group commits: few fsyncs, and a kill still loses nothing the kernel has.

The invariant (``recworld.io.files.Journal``): every line is handed to the
kernel before the next append returns, and an fsync follows at the latest
after ``batch`` lines (or ``batch_s`` seconds), on ``sync`` and on ``close``.
So ``kill -9`` loses at most the line being written, a machine crash at most
the group in flight, and an eval of 1,800 questions makes at most 90 fsyncs.
The checks count ``os.fsync`` calls and read the file with plain ``json``.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.eval_support import config, evaluate_with, oracle
from helpers.runner_fakes import write_suite
from recworld.io import Journal
from recworld.models.scripted import ScriptedModel
from recworld.runner.journal import SAMPLE_BATCH, SampleJournal


class _Fsyncs:
    """Counts os.fsync calls, and the journal's line count at each one (read from the file)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, watched: Path | None = None) -> None:
        self.calls = 0
        self.lines_at: list[int] = []
        real = os.fsync

        def counting(fd: int) -> None:
            self.calls += 1
            if watched is not None and watched.exists():
                self.lines_at.append(watched.read_bytes().count(b"\n"))
            real(fd)

        monkeypatch.setattr(os, "fsync", counting)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 300), batch=st.integers(1, 80), sync_at=st.sets(st.integers(0, 300), max_size=3))
def test_no_line_waits_longer_than_its_group(
    n: int, batch: int, sync_at: set[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("journal") / "j.jsonl"
    with pytest.MonkeyPatch.context() as mp:
        fsyncs = _Fsyncs(mp, path)
        journal = Journal(path, key="k", batch=batch, batch_s=1e9)
        for i in range(n):
            journal.append({"k": str(i)})
            assert path.read_bytes().count(b"\n") == i + 1  # in the kernel before append returns
            if i in sync_at:
                journal.sync()
        journal.close()
    synced = [0, *fsyncs.lines_at]
    assert synced[-1] == n  # close leaves nothing unsynced
    assert all(b - a <= batch for a, b in itertools.pairwise(synced))  # a group: <= batch lines
    assert fsyncs.calls <= -(-n // batch) + len(sync_at)


def test_default_journal_still_fsyncs_every_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsyncs = _Fsyncs(monkeypatch)
    journal = Journal(tmp_path / "j.jsonl", key="k")
    for i in range(5):
        journal.append({"k": str(i)})
    journal.close()
    assert fsyncs.calls == 5


def test_a_killed_writer_loses_no_written_line(tmp_path: Path) -> None:
    """``kill -9`` (here ``os._exit``, no close, no sync) between groups: every appended line is there."""
    path = tmp_path / "j.jsonl"
    code = (
        "import os, sys\n"
        "from recworld.runner.journal import SampleJournal\n"
        "j = SampleJournal(__import__('pathlib').Path(sys.argv[1]))\n"
        "for i in range(100): j.append({'question_id': f'q{i}'})\n"
        "os._exit(9)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    done = subprocess.run([sys.executable, "-c", code, str(path)], env=env, check=False)
    assert done.returncode == 9
    assert set(SampleJournal(path).load()) == {f"q{i}" for i in range(100)}
    assert 100 % SAMPLE_BATCH != 0  # the kill landed inside a group


def test_an_eval_of_1800_questions_makes_at_most_90_fsyncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counts = {"assoc_rule": 300, "mem_item_item": 300, "mem_user_user": 300, "kg_movie_genre": 300,
              "kg_movie_cast": 300, "text_logline": 300}  # fmt: skip
    suite = write_suite(tmp_path / "suite", counts)
    fsyncs = _Fsyncs(monkeypatch)
    run_dir = evaluate_with(ScriptedModel(oracle), config(suite))
    lines = (run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1800 and all(json.loads(line)["question_id"] for line in lines)
    assert fsyncs.calls <= 90, fsyncs.calls
