"""A fatal failure lets nothing more out, and a model that never yields cannot hold the event loop."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from recworld.chat import Message, Request, Response
from recworld.models import FatalModelError, ModelConfig, load_model
from recworld.models.scripted import ScriptedModel
from recworld.runner import Runner, RunnerConfig
from recworld.testing.fake_server import FakeOpenAIServer

SRC = str(Path(__file__).resolve().parents[2] / "src")


def requests(n: int) -> list[Request]:
    return [Request(messages=(Message("user", f"question {i}"),), max_tokens=4) for i in range(n)]


@pytest.mark.parametrize("concurrency", [1, 8])
def test_a_401_lets_no_second_wave_out(concurrency: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-stop-0123456789")
    # Every reply waits until `concurrency` requests are in: the first wave is exactly that many.
    with FakeOpenAIServer("letters", plan=lambda key: ("401",) * 10, barrier=concurrency) as server:
        model = load_model("openai:m", ModelConfig(base_url=server.base_url))
        runner = Runner(model, RunnerConfig(concurrency=concurrency, progress=False, max_retries=3))
        recorded: list[int] = []

        async def go() -> None:
            with pytest.raises(FatalModelError, match="rejected the API key"):
                await runner.map(requests(40), on_result=lambda i, c: recorded.append(i))
            # A later call on the stopped runner is refused without a send.
            with pytest.raises(FatalModelError, match="the run stopped"):
                await runner.complete(requests(41)[-1])
            await runner.aclose()

        asyncio.run(go())
        time.sleep(0.3)  # anything still in the air would land now
        assert sum(server.counts.values()) == concurrency
        assert runner.stats.sent == concurrency and runner.stats.retries == 0
        assert 1 <= len(recorded) <= concurrency  # only requests that were sent became samples
        assert runner.stopped is not None and "HTTP 401" in runner.stopped


def _blocking(delay_s: float) -> ScriptedModel:
    """A model that computes synchronously, like a classic baseline: it never yields to the loop."""

    def answer(request: Request) -> Response:
        time.sleep(delay_s)
        return Response(text="A")

    return ScriptedModel(answer)


@pytest.mark.timing
def test_a_model_that_never_yields_is_cancelled_within_one_answer_and_a_slice() -> None:
    runner = Runner(_blocking(0.01), RunnerConfig(concurrency=8, progress=False))

    async def go() -> float:
        task = asyncio.ensure_future(runner.map(requests(1000)))  # 10 s of answering
        await asyncio.sleep(0)
        started = time.perf_counter()
        asyncio.get_running_loop().call_later(0.3, task.cancel)
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.perf_counter() - started

    elapsed = asyncio.run(go())
    # Without the runner's periodic yield the loop would see the cancel only after all 1000.
    assert elapsed < 0.3 + 0.5, elapsed
    assert len(runner.model.calls) < 200  # type: ignore[attr-defined]


_SIGINT = """
import asyncio, sys, time
from recworld.chat import Message, Request, Response
from recworld.models.scripted import ScriptedModel
from recworld.runner import Runner, RunnerConfig

def answer(request):
    time.sleep(0.02)
    return Response(text="A")

runner = Runner(ScriptedModel(answer), RunnerConfig(concurrency=8, progress=False))
done = []
reqs = [Request(messages=(Message("user", f"q{i}"),)) for i in range(3000)]

def record(index, completion):
    done.append(index)
    if len(done) == 5:
        print("ready", flush=True)

try:
    asyncio.run(runner.map(reqs, on_result=record))
except KeyboardInterrupt:
    print(f"interrupted {len(done)}", flush=True)
    sys.exit(130)
"""


@pytest.mark.slow
@pytest.mark.timing
def test_ctrl_c_stops_a_blocking_model_within_a_second() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_SIGINT)],
        env={**os.environ, "PYTHONPATH": SRC},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    sent = time.perf_counter()
    os.kill(child.pid, signal.SIGINT)
    assert child.wait(10) == 130
    elapsed = time.perf_counter() - sent
    assert elapsed < 1.0, f"Ctrl-C took {elapsed:.2f} s"  # 3000 x 20 ms would be a minute
    assert child.stdout.read().startswith("interrupted")


def test_answer_all_returns_what_stopped_the_run_and_keeps_what_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recworld.runner import ResponseCache, answer_all

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdef")
    plans = {"question 0": (), "question 1": ()}  # the first two are answered, every other one is a 401

    def plan(key: str) -> tuple[str, ...]:
        last = json.loads(key)["messages"][-1]["content"]
        return plans.get(last, ("401",))

    with FakeOpenAIServer("letters", plan=plan) as server:
        model = load_model("openai:m", ModelConfig(base_url=server.base_url))
        got: dict[int, object] = {}
        config = RunnerConfig(concurrency=1, progress=False)
        stats, stopped = asyncio.run(
            answer_all(model, requests(10), config, tmp_path / "c.sqlite", on_result=got.__setitem__)
        )
    assert stopped is not None and "HTTP 401" in str(stopped)
    assert sorted(got) == [0, 1, 2] and stats.sent == 3  # one at a time: the 401 was the third, and the last
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        assert len(cache) == 2  # closed and committed: the two answers are on disk


@pytest.mark.slow
@pytest.mark.timing
def test_ctrl_c_stops_an_itemknn_eval_within_a_second(ml100k_fetched: Path, tmp_path: Path) -> None:
    """The first-hour review's case: Ctrl-C 9 s into ``eval --model itemknn`` took 56 s to land."""
    suite = tmp_path / "suite"
    build = ["build", "--dataset", str(ml100k_fetched), "--measures", "kg_movie_genre,mem_item_item"]
    ran = run_recworld(*build, "--per-measure", "400", "--seed", "0", "--out", str(suite))
    assert ran.returncode == 0, ran.stderr
    out = tmp_path / "run"
    child = subprocess.Popen(
        [sys.executable, "-m", "recworld.cli", "eval", str(suite), "--model", "itemknn", "--out", str(out),
         "--no-progress"],
        env={**os.environ, "PYTHONPATH": SRC}, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    journal = out / ".samples.journal.jsonl"
    deadline = time.monotonic() + 60
    while not (journal.exists() and journal.read_text().count("\n") >= 20):
        assert child.poll() is None and time.monotonic() < deadline, "no answers before the interrupt"
        time.sleep(0.02)
    sent = time.perf_counter()
    child.send_signal(signal.SIGINT)
    assert child.wait(60) == 130
    elapsed = time.perf_counter() - sent
    assert child.stderr is not None
    said = child.stderr.read()
    assert elapsed < 1.0, f"Ctrl-C took {elapsed:.2f} s"
    answered = int(said.split("interrupted: ")[1].split("/")[0])
    assert answered < 800, said  # it stopped mid-run, not after answering everything
