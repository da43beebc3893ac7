"""Runs killed, interrupted, failed or run twice at once (review cases K5-K7, K11, K12; F25).

Real processes against the loopback fake server, because what is tested is
what two processes or a signal do to one folder: evals in children forked from
the test process (:class:`helpers.security.forked.Child`, warm: no second of
imports each), Ctrl-C in a ``python`` subprocess.
"""

from __future__ import annotations

import itertools
import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from helpers.cli import recworld_exit_code, run_recworld
from helpers.security.commands import World
from helpers.security.fake_server import FakeServer, serve
from helpers.security.forked import Child
from recworld.io import output_kinds


def _samples(run_dir: Path) -> list[dict[str, object]]:
    lines = (run_dir / "samples.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line]


def _stable(sample: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in sample.items() if k not in ("latency_s", "cached")}


def _eval(suite: Path, url: str, out: Path, *extra: str) -> Child:
    """``recworld eval`` started in a process of its own: a child forked from this one (warm)."""
    argv = ["eval", str(suite), "--model", "openai:x", "--base-url", url, "--out", str(out)]
    argv += ["--no-progress", "--concurrency", "1", *extra]
    stderr = out.with_name(f"{out.name}-{next(_CHILDREN)}.stderr")
    return Child(lambda: recworld_exit_code(*argv), stderr)


_CHILDREN = itertools.count()


@pytest.mark.slow
def test_k7_two_evals_on_one_run_keep_each_others_samples(world: World, tmp_path: Path) -> None:
    """F25: each process wrote samples.jsonl from what it had loaded plus its own, and the last one won."""
    out = tmp_path / "run"
    with serve("slow_ok", "0.3") as server:
        first = _eval(world.suite, server.url, out, "--measures", "kg_movie_genre")
        second = _eval(world.suite, server.url, out, "--measures", "mem_item_item")
        assert first.wait(120) == 0, first.stderr.read_text()
        assert second.wait(120) == 0, second.stderr.read_text()
    assert Counter(s["measure"] for s in _samples(out)) == {"kg_movie_genre": 5, "mem_item_item": 5}
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["measures"]) == {"kg_movie_genre", "mem_item_item"}
    header = json.loads((out / "run.json").read_text())
    assert header["counts"]["questions"] == 10 and header["status"] == "finished"
    assert output_kinds(out) == {"eval-run"}


@pytest.mark.slow
def test_k6_two_identical_evals_at_once_agree(world: World, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with serve("slow_ok", "0.2") as server:
        processes = [_eval(world.suite, server.url, out) for _ in range(2)]
        assert [p.wait(120) for p in processes] == [0, 0]
        sent = len(server.seen)
    samples = _samples(out)
    assert len(samples) == 10 and len({s["question_id"] for s in samples}) == 10
    assert 10 <= sent <= 20  # noted in the review: at most every request twice, never more


def _kill_9_at_request(process: Child, server: FakeServer, nth: int) -> None:
    """``kill -9`` ``process`` once the server holds its ``nth`` request (mid-run, never before or after)."""
    wanted = len(server.seen) + nth
    deadline = time.monotonic() + 120
    while len(server.seen) < wanted:  # the server holds each reply 0.4 s: the kill finds one in flight
        assert process.poll() is None, "the eval ended before it could be killed mid-run"
        assert time.monotonic() < deadline, "the eval never sent its requests"
        time.sleep(0.01)
    assert process.kill() == -signal.SIGKILL


@pytest.mark.slow
def test_k5_kill_9_mid_eval_then_rerun_matches_an_uninterrupted_run(world: World, tmp_path: Path) -> None:
    with serve("slow_ok", "0.4") as server:
        reference = tmp_path / "reference"
        assert _eval(world.suite, server.url, reference).wait(120) == 0
        bodies = len(server.seen)
        out = tmp_path / "run"
        draw = random.Random(5)
        kills = 3
        for _ in range(kills):
            process = _eval(world.suite, server.url, out)
            _kill_9_at_request(process, server, draw.randint(1, 3))
        assert _eval(world.suite, server.url, out).wait(120) == 0
        sent = len(server.seen) - bodies
    assert sorted(map(json.dumps, map(_stable, _samples(out)))) == sorted(
        map(json.dumps, map(_stable, _samples(reference)))
    )
    assert sent <= bodies + kills  # at most the one in flight at each kill is sent again
    assert output_kinds(out) == {"eval-run"}


SLOW_REPORT = """
import sys, time
from pathlib import Path
import recworld.report.writer as writer
original = writer.build_report
def slow(*args, **kwargs):
    Path(sys.argv[1]).write_text("ready")
    time.sleep(60)
    return original(*args, **kwargs)
writer.build_report = slow
from recworld.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_k11_ctrl_c_in_report_exits_130_in_one_line_and_writes_nothing(world: World, tmp_path: Path) -> None:
    ready, out = tmp_path / "ready", tmp_path / "report"
    command = [sys.executable, "-c", SLOW_REPORT, str(ready), "report", str(world.suite), "--out", str(out)]
    command.append("--no-progress")  # the progress line is not part of the one-line promise
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=30)
    assert process.returncode == 130 and err.count("\n") == 1, err
    assert not out.exists()


def test_k12_a_failed_run_is_unscored_unmarked_and_blank_in_the_report(
    world: World, tmp_path: Path, key_env: str
) -> None:
    """E5/E6: every reply malformed: exit 3, nothing scored, no marker; its report cell is blank."""
    out = tmp_path / "run"
    with serve("invalid_json") as server:
        argv = ["eval", world.suite, "--model", "openai:x", "--base-url", server.url, "--out", out]
        ran = run_recworld(*argv, "--no-progress", "--max-retries", "0")
    assert ran.returncode == 3, ran.stderr
    header = json.loads((out / "run.json").read_text())
    assert header["status"] == "too_many_errors" and header["counts"]["answered"] == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert all(m["score"] is None for m in metrics["measures"].values())
    assert output_kinds(out) == frozenset()  # the marker comes only after success
    ran = run_recworld("report", out)  # beside its own run, which is still claimed
    assert ran.returncode == 0, ran.stderr
    markdown = (out / "report.md").read_text()
    row = next(line for line in markdown.splitlines() if line.startswith("| openai:x"))
    assert "0." not in row.split("|", 2)[2]  # no score printed for an unscored run
