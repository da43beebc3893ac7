"""The cache's prefetch (a miss costs no query) and the collector held back during a map.

Invariants under attack:
- ``ResponseCache.prefetch`` never changes what ``get_json`` returns for a key this
  process stored, before or after the prefetch, committed or pending; it only
  spares the query for a key found absent (``recworld.runner.cache``);
- ``quiet_collector`` blocks, nested and overlapping in any order, restore the
  collector's thresholds exactly when the last one closes
  (``recworld.runner.collector``).
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
from pathlib import Path
from typing import ClassVar

from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.chat import Message, Request, Response
from recworld.runner import ResponseCache, Runner, RunnerConfig
from recworld.runner.collector import GEN0_THRESHOLD, quiet_collector

KEYS = st.sampled_from([f"k{i}" for i in range(8)])
# (op, key): store (await store), put (synchronous), prefetch (a few keys), read.
OPS = st.lists(
    st.tuples(st.sampled_from(["store", "put", "prefetch", "read"]), KEYS), min_size=1, max_size=25
)


@settings(max_examples=60, deadline=None)
@given(ops=OPS)
def test_prefetch_never_hides_a_stored_row(tmp_path_factory: object, ops: list[tuple[str, str]]) -> None:
    root: Path = tmp_path_factory.mktemp("c")  # type: ignore[attr-defined]
    cache = ResponseCache(root / "cache.sqlite")
    written: dict[str, str] = {}  # the checker's own model: key -> last text stored

    async def play() -> None:
        for n, (op, key) in enumerate(ops):
            if op == "store":
                written[key] = f"s{n}"
                await cache.store(key, Response(text=f"s{n}"))
            elif op == "put":
                written[key] = f"p{n}"
                cache.put(key, Response(text=f"p{n}"))
            elif op == "prefetch":
                cache.prefetch([key, "k0", "k7"])
            got = cache.get(key)
            assert (None if got is None else got.text) == written.get(key)

    asyncio.run(play())
    cache.close()
    reopened = ResponseCache(root / "cache.sqlite")
    for key, text in written.items():
        got = reopened.get(key)
        assert got is not None and got.text == text
    reopened.close()


def test_prefetched_miss_costs_no_query(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put("there", Response(text="x"))
    cache.prefetch(["there", "absent"])
    queries: list[str] = []
    cache._db.set_trace_callback(queries.append)
    assert cache.get("absent") is None
    assert queries == []
    assert cache.get("there") is not None and queries  # a present key is read from the database
    cache.close()


def test_a_map_over_a_warm_cache_sends_nothing_and_misses_once_each(tmp_path: Path) -> None:
    """The road a run takes: a prefetching map answers repeats from the cache."""

    class Echo:
        identity: ClassVar[dict[str, str]] = {"backend": "echo", "model": "e"}
        supports: ClassVar[frozenset[str]] = frozenset()
        calls = 0

        async def complete(self, request: Request) -> Response:
            Echo.calls += 1
            return Response(text=request.messages[0].content)

        async def aclose(self) -> None:
            return None

    requests = [Request(messages=(Message("user", f"q{i % 700}"),)) for i in range(1200)]

    async def once() -> list[str]:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        runner = Runner(Echo(), RunnerConfig(concurrency=8, progress=False), cache)  # type: ignore[arg-type]
        results = await runner.map(requests)
        cache.close()
        return [r.response.text for r in results if r.response is not None]

    first = asyncio.run(once())
    assert Echo.calls == 700  # repeats across prefetch chunks coalesce or hit, never resend
    assert first == [f"q{i % 700}" for i in range(1200)]
    assert asyncio.run(once()) == first and Echo.calls == 700
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 700


@settings(max_examples=60, deadline=None)
@given(order=st.permutations(range(4)), depth=st.integers(1, 4))
def test_collector_blocks_restore_exactly(order: list[int], depth: int) -> None:
    before = gc.get_threshold()
    blocks = [quiet_collector() for _ in range(depth)]
    for block in blocks:
        block.__enter__()
        assert gc.get_threshold()[0] >= GEN0_THRESHOLD
    # close them in an order unrelated to opening (overlapping tasks)
    closing = [blocks[i] for i in order if i < depth]
    for n, block in enumerate(closing):
        block.__exit__(None, None, None)
        if n < len(closing) - 1:
            assert gc.get_threshold()[0] >= GEN0_THRESHOLD
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
