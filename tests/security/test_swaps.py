"""Folder swaps, locks and confinement in :mod:`recworld.io` (review cases K3, K4, K6, K7; F23-F25).

* a real ``kill -9`` (a signal from outside, not a hook) of every command that
  swaps a folder in, paused between the two renames and after the swap, then
  a rerun: nothing is lost (F23 lost a suite's ``runs/``);
* a stale trash folder and a reused PID (F24) are never fatal, and a folder
  that only looks like trash (the F23 state an old version left, a user's
  ``.suite.old-v1``) is never taken for it (review 3, D2);
* two processes appending to one journal, or taking one output's lock, never
  lose or tear a line (F25 is the end-to-end case, in ``test_runs_together``);
* no write below a claimed folder goes through a link; temporary files a kill
  left are swept, a live writer's never.
"""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import recworld_exit_code, run_recworld
from helpers.security.commands import BY_NAME, USER_DEEP, USER_FILE, World, prepare
from helpers.security.forked import paused_then_killed
from helpers.security.kills import litter, tree
from recworld.errors import ConfigError
from recworld.io import (
    Journal,
    atomic_directory,
    atomic_write_text,
    claim_output_dir,
    confined,
    mark_output_dir,
    output_directory,
    output_kinds,
    output_lock,
    recover,
    swap,
)
from recworld.io.files import sweep_temporary
from recworld.io.proof import temporary_name


def _kill9_at(point: str, mode: str, target: Path, argv: list[str], work: Path) -> None:
    """Run ``recworld ARGV`` in a forked child; ``kill -9`` it from here once it is paused at ``point``."""

    def command() -> int:
        swap.USE_EXCHANGE = mode == "exchange"  # in the child only
        return recworld_exit_code(*argv)

    stderr = work.with_name(f"{work.name}.stderr")
    assert paused_then_killed(point, target, command, stderr) == -signal.SIGKILL


SWAPPERS = ["build", "export", "data-fetch", "describe-images"]


@pytest.mark.slow
@pytest.mark.parametrize(("point", "mode"), [("swap.old-moved", "rename"), ("swap.placed", "exchange")])
@pytest.mark.parametrize("name", SWAPPERS)
def test_a_real_kill_9_mid_swap_loses_nothing(
    name: str, point: str, mode: str, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = BY_NAME[name]
    reference = tmp_path / "reference"
    reference.mkdir()
    monkeypatch.setenv("RECWORLD_HOME", str(reference / "home"))
    prepare(writer, world, reference)
    ran = run_recworld(*writer.argv(world, reference))
    assert ran.returncode == 0, ran.stderr
    expected = tree(writer.out(reference), base=reference)

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("RECWORLD_HOME", str(work / "home"))
    prepare(writer, world, work)
    out = writer.out(work)
    before = tree(out, base=work)
    mine = {p: p.read_bytes() for p in (out / USER_FILE, out / USER_DEEP) if p.is_file()}
    argv = [str(a) for a in writer.argv(world, work)]
    if name == "describe-images":  # a new output has no old folder to move aside
        point = "swap.placed"
    _kill9_at(point, mode, out.absolute(), argv, work)
    if mode == "exchange":  # one step: old or new, even before any recovery
        assert tree(out, base=work) in (before, expected)
    recover(out)
    assert tree(out, base=work) in (before, expected)
    assert {p: p.read_bytes() for p in mine} == mine
    ran = run_recworld(*writer.argv(world, work))
    assert ran.returncode == 0, ran.stderr
    assert tree(out, base=work) == expected and litter(work) == []


def _suite(world: World, work: Path) -> Path:
    prepare(BY_NAME["build"], world, work)
    return work / "suite"


def _rebuild(world: World, suite: Path) -> int:
    argv = ["build", "--dataset", world.data, "--out", suite, "--per-measure", "5"]
    ran = run_recworld(*argv, "--measures", "kg_movie_genre,mem_item_item", "--no-progress")
    return ran.returncode


def test_k3_a_trash_named_folder_without_a_seal_is_the_users_and_left_alone(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F23's state (``.suite.old-4242``, no suite) from an old version is no longer recognised by name (D2).

    Review 3 showed that recognition by name is itself the hazard: a user's
    ``.suite.old-v1/`` was merged into the suite and deleted. A trash folder is
    recworld's only when its name is sealed for its inode; this one is not, so
    the rebuild makes a new suite and leaves the folder exactly as it was.
    """
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    suite = _suite(world, tmp_path)
    old = suite.with_name(".suite.old-4242")
    suite.rename(old)
    before = tree(old)
    assert _rebuild(world, suite) == 0
    assert tree(old) == before and (suite / "manifest.json").is_file()


def test_k4_a_stale_trash_named_by_this_very_pid_is_no_crash(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F24: ``.small.old-$$/stale`` plus a reused PID made every rebuild fail: "Directory not empty".

    The rebuild succeeds, and the unsealed folder (a user's, as far as anyone can prove) is untouched.
    """
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    suite = _suite(world, tmp_path)
    stale = suite.with_name(f".suite.old-{os.getpid()}") / "stale"
    stale.mkdir(parents=True)
    (stale / "left.txt").write_bytes(b"from a crash\n")
    assert _rebuild(world, suite) == 0
    assert (stale / "left.txt").read_bytes() == b"from a crash\n"
    assert not (suite / "stale").exists()


def test_a_dead_builders_staging_folder_is_cleaned_and_a_live_ones_is_not(tmp_path: Path) -> None:
    """K1's litter: a sealed staging folder a kill left behind is removed; a look-alike never is."""
    target = tmp_path / "out"
    with swap.parent_lock(target):
        dead, dead_fd = swap._new_staging(target)
        live, live_fd = swap._new_staging(target)
    os.close(dead_fd)  # its builder is gone
    (dead / "half.json").write_text("{")
    lookalike = tmp_path / ".out.abcdefgh.partial"
    lookalike.mkdir()
    (lookalike / "mine.txt").write_text("mine")
    try:
        recover(target)
        assert not dead.exists() and live.exists()
    finally:
        os.close(live_fd)
    recover(target)
    assert not live.exists()
    assert (lookalike / "mine.txt").read_text() == "mine"


def test_a_recovery_racing_a_new_staging_folder_never_removes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two commands filling one cache entry: the other's recovery lands between mkdir and flock.

    The staging folder is made under the parent lock, so the recovery waits for
    it and then finds it held (alive); before, it removed the folder as a dead
    builder's and the swap failed with FileNotFoundError (a flaky lunar test).
    """
    target = tmp_path / "entry"
    made = os.mkdir
    racer: list[threading.Thread] = []

    def mkdir_then_race(path: Any, *args: Any, **kwargs: Any) -> None:
        made(path, *args, **kwargs)
        if str(path).endswith(".new"):
            thread = threading.Thread(target=recover, args=(target,))
            thread.start()
            thread.join(0.3)  # a recovery free to run runs now, while the folder holds no flock
            racer.append(thread)

    monkeypatch.setattr(swap.os, "mkdir", mkdir_then_race)
    with atomic_directory(target) as staging:
        assert staging.is_dir()
        (staging / "data.json").write_text("{}")
    monkeypatch.undo()
    racer[0].join(5)
    assert not racer[0].is_alive()
    assert (target / "data.json").read_text() == "{}"


def test_temporary_files_a_kill_left_are_swept_and_a_live_writers_kept(tmp_path: Path) -> None:
    dead = tmp_path / temporary_name(tmp_path, "run.json")
    dead.write_text("{")
    live = tmp_path / temporary_name(tmp_path, "samples.jsonl")
    live.write_text("x")
    theirs = [tmp_path / "notes.tmp", tmp_path / ".run.json.abcdefgh.tmp", tmp_path / ".x.20240101.tmp"]
    for path in theirs:
        path.write_text("mine")
    with live.open("rb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        sweep_temporary(tmp_path)
    assert not dead.exists() and live.exists() and all(p.read_text() == "mine" for p in theirs)


def test_output_directory_drops_its_own_stale_files_and_keeps_the_users(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with output_directory(out, "suite") as staging:
        atomic_write_text(staging / "questions" / "old_measure.jsonl", "v1")
        atomic_write_text(staging / "questions" / "kept_measure.jsonl", "v1")
    (out / "questions" / "my_note.txt").write_text("mine")
    with output_directory(out, "suite") as staging:
        atomic_write_text(staging / "questions" / "kept_measure.jsonl", "v2")
    assert sorted(p.name for p in (out / "questions").iterdir()) == ["kept_measure.jsonl", "my_note.txt"]
    assert (out / "questions" / "kept_measure.jsonl").read_text() == "v2"


def test_a_users_folder_in_the_way_of_a_written_file_is_refused_not_lost(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "manifest.json").mkdir(parents=True)
    (out / "manifest.json" / "mine.txt").write_text("mine")
    with (
        pytest.raises(ConfigError, match="in the way"),
        output_directory(out, "suite", force=True) as staging,
    ):
        atomic_write_text(staging / "manifest.json", "{}")
    assert (out / "manifest.json" / "mine.txt").read_text() == "mine"
    assert litter(tmp_path) == []


def test_writes_below_a_claimed_folder_never_pass_through_a_link(tmp_path: Path) -> None:
    out = claim_output_dir(tmp_path / "run", "eval-run")
    outside = tmp_path / "outside"
    outside.mkdir()
    (out / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ConfigError, match="symbolic link inside the output folder"):
        atomic_write_text(out / "sub" / "x.json", "{}")
    with pytest.raises(ConfigError, match="symbolic link"):
        Journal(out / "sub" / "j.jsonl", "k").append({"k": 1})
    (out / "log").symlink_to(outside / "log.txt")
    with pytest.raises(ConfigError, match="symbolic link"):
        confined(out / "log")
    atomic_write_text(out / "log", "replaced, not followed")  # a rename replaces the link itself
    assert not (outside / "log.txt").exists() and sorted(os.listdir(outside)) == []
    above = tmp_path / "linked-parent"
    above.symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "real").mkdir()
    out2 = claim_output_dir(above / "run", "eval-run")  # a link above the folder is the user's choice
    atomic_write_text(out2 / "fine.json", "{}")
    assert (tmp_path / "real" / "run" / "fine.json").is_file()


def test_the_marker_comes_after_success_and_a_claim_lets_the_same_command_resume(tmp_path: Path) -> None:
    out = claim_output_dir(tmp_path / "run", "eval-run")
    assert output_kinds(out) == frozenset()  # claimed, not marked
    claim_output_dir(out, "eval-run")  # the same command resumes on its claim
    with pytest.raises(ConfigError, match="unfinished 'eval-run' run"):
        claim_output_dir(out, "report")
    mark_output_dir(out, "eval-run")
    claim_output_dir(out, "report", joins=("eval-run",))
    mark_output_dir(out, "report")
    assert output_kinds(out) == {"eval-run", "report"} and sorted(os.listdir(out)) == [
        ".recworld-output.json"
    ]


def _append(path: str, who: int, n: int) -> None:
    journal = Journal(Path(path), "key")
    for i in range(n):
        journal.append({"key": f"{who}-{i}", "pad": "x" * 3000})
    journal.close()


def _load_many(path: str, n: int) -> None:
    for _ in range(n):
        Journal(Path(path), "key").load()


def test_two_processes_appending_to_one_journal_lose_and_tear_nothing(tmp_path: Path) -> None:
    """F25's root: concurrent writers of one run. Appends and loads hold the journal's flock."""
    path = tmp_path / "journal.jsonl"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append, args=(str(path), w, 300)) for w in range(2)]
    workers.append(context.Process(target=_load_many, args=(str(path), 200)))  # loads repair torn tails
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    records = Journal(path, "key").load()
    assert len(records) == 600 and all(r["pad"] == "x" * 3000 for r in records.values())


def _count(path: str, n: int) -> None:
    counter = Path(path) / "count.txt"
    for _ in range(n):
        with output_lock(Path(path)):
            value = int(counter.read_text()) if counter.exists() else 0
            atomic_write_text(counter, str(value + 1))


def test_writers_of_one_output_take_turns_through_its_lock(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_count, args=(str(tmp_path), 100)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert (tmp_path / "count.txt").read_text() == "300"
