"""The response cache commits or rolls back whole, and every row is strict JSON (issue 23, item 4; D10).

Review 3 found ``\\ud800`` in a reply raising inside ``executemany`` after
``BEGIN IMMEDIATE``: the transaction stayed open (another process sharing
``--cache-path`` then blocked) and the batch's future was never resolved, so
``eval`` waited for ever. Here documents of any shape (surrogates, NaN and
infinities, nesting, huge text) are stored in batches, and a batch is made to
fail inside its transaction; the checks read the file with ``sqlite3`` and
``json`` (``parse_constant`` raising), sharing nothing with the cache.
"""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recworld.chat import Response, Usage
from recworld.errors import DataError
from recworld.runner import ResponseCache

TEXT = (
    st.text(max_size=40)
    | st.text(st.characters(categories=["Cs", "Cc", "Co"]) | st.characters(), max_size=20)
    | st.sampled_from(["\ud800", "a\udfffb", "\udc00\ud800"])
)
NUMBER = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(2**70), 2**70)
LEAF = TEXT | NUMBER | st.booleans() | st.none() | st.just("x" * 50_000)
DOCUMENT = st.dictionaries(
    TEXT,
    st.recursive(
        LEAF, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(TEXT, kids, max_size=3), max_leaves=12
    ),
    max_size=4,
)


def strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(name)

    return json.loads(text, parse_constant=refuse)


def rows(path: Path) -> dict[str, Any]:
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        found = dict(db.execute("SELECT key, value FROM responses").fetchall())
    finally:
        db.close()
    for value in found.values():
        value.encode("utf-8")
        assert isinstance(strict(value), dict)
    return found


@pytest.fixture(scope="module")
def shared_cache() -> Any:
    with tempfile.TemporaryDirectory() as folder:
        cache = ResponseCache(Path(folder) / "cache.sqlite")
        cache.batch = 0  # type: ignore[attr-defined]
        yield cache
        cache.close()
        rows(cache.path)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(documents=st.lists(DOCUMENT, min_size=1, max_size=5))
def test_any_document_is_stored_as_strict_json_in_one_batch(
    documents: list[dict[str, Any]], shared_cache: ResponseCache
) -> None:
    shared_cache.batch += 1  # type: ignore[attr-defined]
    keys = [f"b{shared_cache.batch}-{i}" for i in range(len(documents))]  # type: ignore[attr-defined]
    commits = shared_cache.commits

    async def store_all() -> None:
        jobs = (shared_cache.store_json(key, doc) for key, doc in zip(keys, documents, strict=True))
        await asyncio.wait_for(asyncio.gather(*jobs), 10)

    asyncio.run(store_all())
    assert shared_cache.commits == commits + 1  # one batch, one transaction
    assert not shared_cache._db.in_transaction
    db = sqlite3.connect(shared_cache.path)
    try:
        marks = ",".join("?" * len(keys))
        found = db.execute(f"SELECT key, value FROM responses WHERE key IN ({marks})", keys).fetchall()
    finally:
        db.close()
    assert sorted(k for k, _ in found) == sorted(keys)
    for _key, value in found:
        value.encode("utf-8")
        assert isinstance(strict(value), dict)


@settings(max_examples=40, deadline=None)
@given(
    st.text(max_size=30) | st.sampled_from(["A \ud800 tail", "\udfff"]),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4) | st.none(),
)
def test_a_response_reads_back_as_it_was_made(text: str, scores: list[float] | None) -> None:
    made = Response(text=text, choice_logprobs=None if scores is None else tuple(scores), usage=Usage(3, 1))
    with tempfile.TemporaryDirectory() as folder:
        with ResponseCache(Path(folder) / "c.sqlite") as cache:
            cache.put("k", made)
        with ResponseCache(Path(folder) / "c.sqlite") as cache:
            back = cache.get("k")
        rows(Path(folder) / "c.sqlite")
    assert back is not None and back.text == made.text
    back.text.encode("utf-8")
    if scores is None:
        assert back.choice_logprobs is None
    else:
        assert back.choice_logprobs is not None
        for got, given_ in zip(back.choice_logprobs, scores, strict=True):
            assert got == given_ if math.isfinite(given_) else got == -math.inf


def test_a_failing_batch_rolls_back_whole_and_fails_every_waiter(tmp_path: Path) -> None:
    """A row refused mid-batch: no row of the batch is kept, nothing waits, nothing stays open."""
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    cache.put_json("before", {"text": "kept"})
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON responses WHEN NEW.key = 'boom' "
        "BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    db.commit()
    db.close()

    async def batch() -> list[Any]:
        jobs = [cache.store_json(key, {"text": key}) for key in ("a", "boom", "c")]
        return await asyncio.wait_for(asyncio.gather(*jobs, return_exceptions=True), 10)

    outcomes = asyncio.run(batch())
    assert all(isinstance(o, DataError) for o in outcomes), outcomes
    assert not cache._db.in_transaction
    # The next batch works: the connection is usable and another process is not blocked.
    other = sqlite3.connect(path, timeout=1)
    other.execute("INSERT INTO responses(key, value, created) VALUES ('other', '{}', 0)")
    other.commit()
    other.close()
    asyncio.run(cache.store_json("after", {"text": "ok"}))
    cache.close()
    assert sorted(rows(path)) == ["after", "before", "other"]


def test_a_bug_inside_a_batch_is_the_waiters_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any exception in the commit (here a TypeError) reaches the waiters; before, only DataError did."""
    cache = ResponseCache(tmp_path / "cache.sqlite")
    real = cache._db

    class Cursor:
        def __init__(self) -> None:
            self._cursor = real.cursor()

        def execute(self, sql: str, *args: Any) -> Any:
            return self._cursor.execute(sql, *args)

        def executemany(self, sql: str, rows: Any) -> Any:
            raise TypeError("a bug")

        def close(self) -> None:
            self._cursor.close()

    class Connection:
        in_transaction = property(lambda self: real.in_transaction)

        def cursor(self) -> Cursor:
            return Cursor()

        def execute(self, sql: str, *args: Any) -> Any:
            return real.execute(sql, *args)

    monkeypatch.setattr(cache, "_db", Connection())

    async def one() -> None:
        await asyncio.wait_for(cache.store_json("k", {"text": "x"}), 10)

    with pytest.raises(DataError, match="a bug"):
        asyncio.run(one())
    assert not real.in_transaction
    monkeypatch.setattr(cache, "_db", real)
    cache.close()
    assert rows(tmp_path / "cache.sqlite") == {}
