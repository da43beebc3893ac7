"""The cache writes in batches (one transaction per turn of the loop) and loses nothing a caller saw."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recworld.chat import Message, Request, Response, Usage
from recworld.models.scripted import ScriptedModel
from recworld.runner import ResponseCache, Runner, RunnerConfig, cache_key

SRC = str(Path(__file__).resolve().parents[2] / "src")


def requests(n: int, tag: str = "q") -> list[Request]:
    return [Request(messages=(Message("user", f"{tag} {i}"),), max_tokens=4) for i in range(n)]


def rows_on_disk(path: Path) -> int:
    """Rows a separate connection sees: what is committed, not what one process holds."""
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def test_answers_arriving_together_share_one_transaction(tmp_path: Path) -> None:
    model = ScriptedModel(lambda r: "A")
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        runner = Runner(model, RunnerConfig(concurrency=64, progress=False), cache)
        asyncio.run(runner.map(requests(64)))
        # 64 answers, all ready in the same turn of the loop: one commit, not 64.
        assert cache.commits == 1
        assert rows_on_disk(tmp_path / "c.sqlite") == 64


def test_a_completion_is_committed_before_its_caller_sees_it(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    model = ScriptedModel(lambda r: "B")
    seen: list[int] = []
    with ResponseCache(path) as cache:
        runner = Runner(model, RunnerConfig(concurrency=8, progress=False), cache)

        def check(index: int, _completion: object) -> None:
            key = cache_key(model.identity, batch[index])
            with sqlite3.connect(path) as db:
                assert db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone() is not None
            seen.append(index)

        batch = requests(40)
        asyncio.run(runner.map(batch, on_result=check))
    assert sorted(seen) == list(range(40))


def test_reads_see_rows_not_yet_committed(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:

        async def go() -> None:
            pending = asyncio.ensure_future(cache.store("k", Response(text="x"), 0.5))
            await asyncio.sleep(0)  # stored, commit not yet run
            assert cache.get_entry("k") == (Response(text="x"), 0.5) and "k" in cache
            await pending

        asyncio.run(go())
        assert cache.commits == 1


_WRITER = """
import asyncio, sys
from pathlib import Path
from recworld.chat import Message, Request
from recworld.models.scripted import ScriptedModel
from recworld.runner import ResponseCache, Runner, RunnerConfig

class Model(ScriptedModel):
    async def complete(self, request):
        await asyncio.sleep(0.001)
        return await super().complete(request)

cache = ResponseCache(Path(sys.argv[1]))
runner = Runner(Model(lambda r: "A"), RunnerConfig(concurrency=16, progress=False), cache)
reqs = [Request(messages=(Message("user", f"q {i}"),), max_tokens=4) for i in range(10**6)]
asyncio.run(runner.map(reqs, on_result=lambda i, c: print(i, flush=True)))
"""


@pytest.mark.slow
def test_killed_mid_run_every_answer_a_caller_saw_is_in_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_WRITER), str(path)],
        env={**os.environ, "PYTHONPATH": SRC},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    seen = [int(child.stdout.readline()) for _ in range(3000)]
    os.kill(child.pid, signal.SIGKILL)
    child.wait(10)
    model = ScriptedModel(lambda r: "A")
    batch = requests(max(seen) + 1)
    with ResponseCache(path) as cache:
        missing = [i for i in seen if cache.get(cache_key(model.identity, batch[i])) is None]
        assert not missing, f"{len(missing)} answers handed to the caller were not committed"
        # Rerunning what was seen sends nothing.
        runner = Runner(model, RunnerConfig(progress=False), cache)
        asyncio.run(runner.map([batch[i] for i in seen]))
        assert runner.stats.sent == 0
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@pytest.mark.parametrize(
    "value",
    [
        "not json at all",
        "[1, 2, 3]",
        '{"choice_logprobs": null}',  # no text
        '{"text": "A", "usage": [1, 2]}',
        '{"text": "A", "choice_logprobs": ["x"]}',
        '{"text": "A", "usage": {"prompt_tokens": 1e400}}',
        "[" * 100_000,
    ],
)
def test_a_corrupt_row_is_a_miss_and_is_replaced(
    tmp_path: Path, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.sqlite"
    model = ScriptedModel(lambda r: "C")
    request = requests(1)[0]
    key = cache_key(model.identity, request)
    ResponseCache(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO responses(key, value, created) VALUES (?, ?, 0)", (key, value))
    with ResponseCache(path) as cache, caplog.at_level(logging.WARNING):
        assert cache.get_entry(key) is None and cache.corrupt == 1
        runner = Runner(model, RunnerConfig(progress=False), cache)
        completion = asyncio.run(runner.complete(request))
        assert completion.response == Response(text="C", usage=Usage(1, 1)) and runner.stats.sent == 1
        assert cache.get(key) == completion.response  # the good answer replaced the bad row
    assert "unreadable" in caplog.text and key[:12] in caplog.text
