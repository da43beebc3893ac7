"""ResponseCache: keys, persistence, and safety across processes and kills."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from recworld.chat import AnswerMode, Message, Request, Response, Usage
from recworld.runner import ResponseCache, Runner, RunnerConfig, cache_key

SRC = str(Path(__file__).resolve().parents[2] / "src")


def req(text: str = "hello", **kwargs: object) -> Request:
    return Request(messages=(Message("user", text),), choices=("A", "B"), **kwargs)  # type: ignore[arg-type]


@dataclasses.dataclass(frozen=True)
class QuestionStub:
    id: str
    gold_free: Literal[True] = True  # a public view: Request refuses a question object without it


class UrlModel:
    """A model whose identity carries a base URL, like an HTTP backend's."""

    def __init__(self, name: str, base_url: str) -> None:
        self.name, self.base_url = name, base_url
        self.calls = 0

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "http", "model": self.name, "base_url": self.base_url}

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE})

    async def complete(self, request: Request) -> Response:
        self.calls += 1
        return Response(text="A")

    async def aclose(self) -> None:
        return None


def test_round_trip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    response = Response(text="B", choice_logprobs=(-1.5, -0.25), usage=Usage(7, 1))
    with ResponseCache(path) as cache:
        cache.put("k", response)
        assert cache.get("k") == Response(text="B", choice_logprobs=(-1.5, -0.25), usage=Usage(7, 1))
        assert cache.get("missing") is None
    with ResponseCache(path) as reopened:
        assert "k" in reopened and len(reopened) == 1
        assert reopened.get("k") == response
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_key_depends_only_on_output_relevant_fields() -> None:
    ident = {"backend": "http", "model": "m", "base_url": "http://a"}
    base = cache_key(ident, req())
    assert cache_key(dict(reversed(list(ident.items()))), req()) == base  # canonical JSON
    different = [
        cache_key(ident, req("other")),
        cache_key(ident, req(temperature=0.7)),
        cache_key(ident, req(max_tokens=3)),
        cache_key(ident, req(mode=AnswerMode.LOGLIK)),
        cache_key({**ident, "model": "m2"}, req()),
        cache_key({**ident, "base_url": "http://b"}, req()),
    ]
    assert len({base, *different}) == len(different) + 1


def test_requests_differing_only_in_seed_get_different_keys() -> None:
    ident = {"backend": "http", "model": "m"}
    assert cache_key(ident, req(seed=0)) != cache_key(ident, req(seed=1))
    assert cache_key(ident, req(seed=1)) == cache_key(ident, req(seed=1))


# One changed value per Request field: a field added to Request without a line here fails the test.
_CHANGED: dict[str, object] = {
    "messages": (Message("user", "hello"), Message("assistant", "A")),
    "mode": AnswerMode.LOGLIK,
    "choices": ("A", "C"),
    "max_tokens": 7,
    "temperature": 0.3,
    "stop": ("\n",),
    "json_schema": {"type": "object"},
    "seed": 42,
    "question": QuestionStub("q-1"),
}


def test_every_request_field_is_in_the_key() -> None:
    assert set(_CHANGED) == {f.name for f in dataclasses.fields(Request)}
    ident = {"backend": "http", "model": "m"}
    base = cache_key(ident, req())
    keys = {
        name: cache_key(ident, dataclasses.replace(req(), **{name: value}))
        for name, value in _CHANGED.items()
    }
    assert base not in keys.values() and len(set(keys.values())) == len(keys)
    # The question enters by its id only: another object with the same id is the same request.
    same_id = dataclasses.replace(req(), question=QuestionStub("q-1"))
    assert cache_key(ident, same_id) == keys["question"]


_KEY_OF = """
from recworld.chat import AnswerMode, Message, Request
from recworld.runner import cache_key
request = Request(messages=(Message("user", "hello"),), choices=("A", "B"), mode=AnswerMode.LOGLIK,
                  json_schema={"b": [1, 2], "a": {"c": None}}, seed=7)
print(cache_key({"backend": "http", "model": "m"}, request))
"""


def test_the_same_request_has_the_same_key_in_every_process() -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "PYTHONHASHSEED": "random"}
    keys = {
        subprocess.run(
            [sys.executable, "-c", _KEY_OF], env=env, capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    request = req(mode=AnswerMode.LOGLIK, json_schema={"b": [1, 2], "a": {"c": None}}, seed=7)
    assert keys == {cache_key({"backend": "http", "model": "m"}, request) + "\n"}


def run_all(model: object, config: RunnerConfig, cache: ResponseCache, requests: list[Request]) -> int:
    runner = Runner(model, config, cache)  # type: ignore[arg-type]
    asyncio.run(runner.map(requests))
    return runner.stats.cache_hits


def test_runner_settings_keep_hits_and_model_changes_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    requests = [req(f"q{i}") for i in range(6)]
    slow = RunnerConfig(concurrency=1, timeout_s=5, max_retries=0, progress=False)
    fast = RunnerConfig(concurrency=32, timeout_s=500, max_retries=9, backoff_base_s=2, progress=False)
    first = UrlModel("m", "http://a")
    assert run_all(first, slow, cache, requests) == 0 and first.calls == 6
    again = UrlModel("m", "http://a")
    assert run_all(again, fast, cache, requests) == 6 and again.calls == 0
    for changed in (UrlModel("m2", "http://a"), UrlModel("m", "http://b")):
        assert run_all(changed, fast, cache, requests) == 0 and changed.calls == 6
    hot = UrlModel("m", "http://a")
    assert run_all(hot, fast, cache, [req(f"q{i}", temperature=1.0) for i in range(6)]) == 0
    assert run_all(hot, fast, cache, [req(f"q{i}!") for i in range(6)]) == 0
    assert hot.calls == 12


_WRITER = """
import sys
from recworld.chat import Response
from recworld.runner import ResponseCache
cache = ResponseCache(sys.argv[1])
tag, n = sys.argv[2], int(sys.argv[3])
for i in range(n):
    cache.put(f"{tag}-{i}", Response(text=f"{tag}{i}" * 20))
    if n > 1000 and i == 50:
        print("ready", flush=True)
"""


def _writer(path: Path, tag: str, n: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), tag, str(n)], env=env, stdout=subprocess.PIPE, text=True
    )


def test_concurrent_processes_share_one_cache(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    writers = [_writer(path, tag, 200) for tag in ("a", "b", "c")]
    assert all(w.wait(60) == 0 for w in writers)
    with ResponseCache(path) as cache:
        assert len(cache) == 600
        assert all(cache.get(f"{t}-{i}") == Response(text=f"{t}{i}" * 20) for t in "abc" for i in (0, 199))


def test_killed_writer_leaves_a_consistent_database(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    writer = _writer(path, "k", 10**7)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(10)
    with ResponseCache(path) as cache:
        n = len(cache)
        assert n > 50
        # Every committed row is whole, and rows are committed in order.
        assert all(cache.get(f"k-{i}") == Response(text=f"k{i}" * 20) for i in range(n))
        cache.put("after", Response(text="x"))  # still writable
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_cache_keyer_matches_cache_key() -> None:
    from recworld.runner.cache import CacheKeyer

    for ident in ({"backend": "b", "model": "m"}, {"model": "é", "base_url": "http://a", "backend": "x"}):
        keyer = CacheKeyer(ident)
        for request in (req(), req("other"), req(temperature=0.7), req(mode=AnswerMode.LOGLIK), req("ünï")):
            assert keyer(request) == cache_key(ident, request)
