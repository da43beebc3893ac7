"""A persistent response cache shared by every LLM call in RecWorld.

Keys are built only from what changes a model's output: the model's
``identity`` (backend, model name, base URL, quantisation) and the request's
``cache_payload()`` (messages, mode, choices, decoding settings). Concurrency,
timeouts, retry settings and API keys never enter the key, so changing them
keeps every hit and no secret ever reaches the database.

The store is one SQLite file in WAL mode: readers never block the writer,
several processes may share it (``busy_timeout`` serialises writers), and a
process killed mid-write leaves the last committed state intact. Rows are
written in batches, one transaction per turn of the event loop (see
:meth:`ResponseCache.store`). Values are ``Response.to_json()`` documents (or,
for embeddings, a vector document): plain JSON, never pickle.

Invariant: every row written is strict JSON text that encodes as UTF-8 (a
non-finite number is written ``null``, a lone surrogate U+FFFD), and every
batch is committed whole or rolled back whole: whatever goes wrong inside one
(a full disk, a bug), the transaction is closed, no row of it is kept, and
every caller waiting on it gets the error instead of waiting for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from recworld.chat import Response, clean_text
from recworld.errors import DataError
from recworld.io import dumps_canonical

CACHE_SCHEMA = "recworld.cache/1"
CHECKPOINT_PAGES = 16384  # 4 KiB pages: the WAL is folded into the database every 64 MiB
PREFETCH_CHUNK = 500  # keys per prefetch query (SQLite allows 32766 parameters)
MAX_CORRUPT_WARNINGS = 5  # unreadable rows are counted; only the first few are logged

_log = logging.getLogger(__name__)

# Reused encoders: ``json.dumps`` with arguments builds a new encoder per call (about 4 us).
# The canonical one gives exactly ``recworld.io.dumps_canonical``'s text (tested); values need no
# canonical form, only keys do.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

_DDL = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class Keyed(Protocol):
    """What the cache keys: a chat :class:`Request` or an :class:`~recworld.chat.EmbeddingRequest`."""

    def cache_payload(self) -> dict[str, Any]: ...


def cache_key(identity: Mapping[str, str], request: Keyed) -> str:
    """The sha256 hex digest naming ``request`` sent to the model ``identity``."""
    document = {"model": dict(identity), "request": request.cache_payload()}
    return hashlib.sha256(_utf8(dumps_canonical(document))).hexdigest()


def _utf8(text: str) -> bytes:
    """Key text as bytes; a lone surrogate (from a crafted suite) is hashed as its code point, not a crash."""
    return text.encode("utf-8", "surrogatepass")


class CacheKeyer:
    """:func:`cache_key` for one fixed ``identity``, with the identity hashed once.

    The canonical document is ``{"model":<identity>,"request":<payload>}`` (keys
    sorted, and "model" < "request"), so its bytes are a fixed prefix, the
    payload, and ``}``. Feeding the prefix to sha256 once and copying that state
    per request gives byte-for-byte the same key as :func:`cache_key` (tested)
    while skipping the identity's serialisation on every request.
    """

    def __init__(self, identity: Mapping[str, str]) -> None:
        prefix = '{"model":' + dumps_canonical(dict(identity)) + ',"request":'
        self._prefix = hashlib.sha256(_utf8(prefix))

    def __call__(self, request: Keyed) -> str:
        digest = self._prefix.copy()
        digest.update(_utf8(_CANONICAL(request.cache_payload())))
        digest.update(b"}")
        return digest.hexdigest()


class ResponseCache:
    """Successful responses (and embedding vectors) keyed by :func:`cache_key`, stored in SQLite (WAL).

    Reads are short synchronous queries. Writes from a runner go through
    :meth:`store`: the row joins the batch of rows stored in this turn of the
    event loop, the batch is committed in one transaction on the next turn
    (group commit), and ``store`` returns once its row is committed. A runner
    hands a response to its caller only after that, so a process killed at any
    moment loses no answer anyone saw, and one transaction per batch instead
    of one per row is what makes the cached path fast. :meth:`put` writes at
    once (for synchronous callers). Reads see rows not yet committed.

    One cache may be used from many asyncio tasks and threads (a lock guards
    the connection and the pending rows); other processes coordinate through
    SQLite's own file locks. A row that cannot be read back (corrupt JSON, a
    wrong shape) is a miss with a warning, never a crash: the next answer
    replaces it.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._pending: dict[str, str] = {}  # rows stored but not yet committed, by key
        self._waiting: dict[asyncio.AbstractEventLoop, asyncio.Future[None]] = {}
        # Keys a prefetch found absent (see :meth:`prefetch`): looked up without a query until stored.
        self._absent: set[str] = set()
        self.corrupt = 0  # rows read back as misses because they could not be parsed
        self.commits = 0  # write transactions (for tests and benchmarks)
        try:
            # isolation_level=None: autocommit; batches open their own transaction.
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL is crash-safe for a killed process in WAL mode; only power loss
            # can drop the last few commits, which costs a re-sent request, never a
            # corrupt database.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=30000")
            # Checkpoint (copy the WAL into the file, with an fsync) every 64 MiB instead of every
            # 4 MiB: with random keys each batch dirties many pages, and the default stalled the
            # event loop for 5 to 15 ms every few batches. close() checkpoints the rest.
            self._db.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")
            self._db.executescript(_DDL)
            self._db.execute("INSERT OR IGNORE INTO meta(name, value) VALUES ('schema', ?)", (CACHE_SCHEMA,))
        except sqlite3.DatabaseError as exc:
            raise DataError(f"cannot open response cache: {exc}", path=self.path) from exc

    # -- reading --------------------------------------------------------------------------------

    def get(self, key: str) -> Response | None:
        """The cached response for ``key``, or None."""
        entry = self.get_entry(key)
        return None if entry is None else entry[0]

    def get_entry(self, key: str) -> tuple[Response, float] | None:
        """The cached response and the seconds its original send took (0 when not recorded)."""
        data = self.get_json(key)
        if data is None:
            return None
        try:
            response = Response.from_json(data)
        except (AttributeError, KeyError, TypeError, ValueError, OverflowError):
            self._corrupt(key, "not a response")
            return None
        latency = data.get("latency_s", 0.0)
        return response, float(latency) if isinstance(latency, int | float) else 0.0

    def prefetch(self, keys: Iterable[str]) -> None:
        """Look ``keys`` up in one query per :data:`PREFETCH_CHUNK`, so a later miss costs no query.

        A key found absent is remembered until this cache stores it; a row another
        process writes meanwhile is then not seen, which costs one re-sent
        request, never a wrong answer. Keys found present are left to
        :meth:`get_json`, so nothing is held in memory for them.
        """
        wanted = list(dict.fromkeys(keys))
        for start in range(0, len(wanted), PREFETCH_CHUNK):
            chunk = wanted[start : start + PREFETCH_CHUNK]
            marks = ",".join("?" * len(chunk))
            with self._lock:
                try:
                    rows = self._db.execute(f"SELECT key FROM responses WHERE key IN ({marks})", chunk)
                    present = {row[0] for row in rows}
                except sqlite3.DatabaseError:  # a damaged page: get_json looks each key up itself
                    continue
                self._absent.update(k for k in chunk if k not in present and k not in self._pending)

    def get_json(self, key: str) -> dict[str, Any] | None:
        """The JSON object stored under ``key``; None when absent or unreadable."""
        with self._lock:
            text = self._pending.get(key)
            if text is None and key in self._absent:
                return None
            if text is None:
                try:
                    row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
                except sqlite3.DatabaseError as exc:  # a damaged page: this row is lost, not the run
                    row = None
                    self._corrupt(key, str(exc))
                text = None if row is None else row[0]
        if text is None:
            return None
        try:
            data = json.loads(text)
        except (TypeError, ValueError, RecursionError):
            data = None
        if not isinstance(data, dict):
            self._corrupt(key, "not a JSON object")
            return None
        return data

    def _corrupt(self, key: str, why: str) -> None:
        self.corrupt += 1
        if self.corrupt <= MAX_CORRUPT_WARNINGS:
            _log.warning(
                "%s: cache row %s... unreadable (%s); asking the model again", self.path, key[:12], why
            )

    # -- writing --------------------------------------------------------------------------------

    async def store(self, key: str, response: Response, latency_s: float | None = None) -> None:
        """Store a response with the current batch; returns once the batch is committed."""
        await self.store_json(key, _record(response, latency_s))

    async def store_json(self, key: str, value: Mapping[str, Any]) -> None:
        """:meth:`store` for any JSON object."""
        await self.store_documents({key: value})

    async def store_documents(self, rows: Mapping[str, Mapping[str, Any]]) -> None:
        """Store JSON objects by key with the current batch; returns once the batch is committed."""
        loop = asyncio.get_running_loop()
        texts = {key: _row_text(value) for key, value in rows.items()}
        with self._lock:
            self._pending.update(texts)
            self._absent.difference_update(texts)
            batch = self._waiting.get(loop)
            if batch is None:
                batch = self._waiting[loop] = loop.create_future()
                loop.call_soon(self._commit_turn, loop)
        # shield: a cancelled caller must not cancel the batch others wait for.
        await asyncio.shield(batch)

    def _commit_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        """Commit every pending row in one transaction and release this loop's waiters."""
        with self._lock:
            batch = self._waiting.pop(loop)
            for other in [lp for lp in self._waiting if lp.is_closed()]:
                del self._waiting[other]  # their rows are pending still: committed here
        try:
            self.flush()
        except BaseException as exc:  # any failure: the waiters get it (flush rolled the batch back)
            if not batch.done():
                failure = exc if isinstance(exc, DataError) else DataError(f"{exc!r}", path=self.path)
                batch.set_exception(failure)
            if not isinstance(exc, Exception):
                raise
            return
        if not batch.done():
            batch.set_result(None)

    def put(self, key: str, response: Response, latency_s: float | None = None) -> None:
        """Store a response now, in its own transaction (with anything pending before it)."""
        self.put_json(key, _record(response, latency_s))

    def put_json(self, key: str, value: Mapping[str, Any]) -> None:
        with self._lock:
            self._pending[key] = _row_text(value)
            self._absent.discard(key)
        self.flush()

    def flush(self) -> None:
        """Commit every pending row in one transaction."""
        with self._lock:
            rows, self._pending = self._pending, {}
            if not rows:
                return
            now = time.time()
            try:
                with contextlib.closing(self._db.cursor()) as cursor:
                    cursor.execute("BEGIN IMMEDIATE")
                    cursor.executemany(
                        "INSERT OR REPLACE INTO responses(key, value, created) VALUES (?, ?, ?)",
                        [(key, value, now) for key, value in rows.items()],
                    )
                    cursor.execute("COMMIT")
            except BaseException as exc:  # the batch goes whole or not at all; nothing stays open
                if self._db.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._db.execute("ROLLBACK")
                if not isinstance(exc, Exception):
                    raise
                why = exc if isinstance(exc, sqlite3.DatabaseError) else repr(exc)
                raise DataError(f"cannot write the response cache: {why}", path=self.path) from exc
            self.commits += 1

    # -- the rest -------------------------------------------------------------------------------

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._lock:
            if key in self._pending:
                return True
            row = self._db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone()
        return row is not None

    def close(self) -> None:
        """Commit what is pending, checkpoint the WAL into the main file and close the connection."""
        self.flush()
        with self._lock:
            # Another process may hold the database; its own checkpoint will do.
            with contextlib.suppress(sqlite3.OperationalError):
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _row_text(value: Mapping[str, Any]) -> str:
    """``value`` as a row: strict JSON (non-finite numbers ``null``) with no lone surrogate."""
    try:
        text = _COMPACT(dict(value))
    except ValueError:  # NaN or an infinity somewhere: JSON has no such number
        text = _COMPACT(_finite(dict(value)))
    return clean_text(text)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _record(response: Response, latency_s: float | None) -> dict[str, Any]:
    record = response.to_json()
    if latency_s is not None:
        record["latency_s"] = round(latency_s, 6)
    return record
