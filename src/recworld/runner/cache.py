"""A persistent response cache shared by every LLM call in RecWorld.

Keys are built only from what changes a model's output: the model's
``identity`` (backend, model name, base URL, quantisation) and the request's
``cache_payload()`` (messages, mode, choices, decoding settings). Concurrency,
timeouts, retry settings and API keys never enter the key, so changing them
keeps every hit and no secret ever reaches the database.

The store is one SQLite file in WAL mode: readers never block the writer,
several processes may share it (``busy_timeout`` serialises writers), and a
process killed mid-write leaves the last committed state intact because every
``put`` is its own transaction. Values are ``Response.to_json()`` documents:
plain JSON, never pickle.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recworld.chat import Request, Response
from recworld.errors import DataError
from recworld.io import dumps_canonical

CACHE_SCHEMA = "recworld.cache/1"

_DDL = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def cache_key(identity: Mapping[str, str], request: Request) -> str:
    """The sha256 hex digest naming ``request`` sent to the model ``identity``."""
    document = {"model": dict(identity), "request": request.cache_payload()}
    return hashlib.sha256(dumps_canonical(document).encode("utf-8")).hexdigest()


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
        self._prefix = hashlib.sha256(prefix.encode("utf-8"))

    def __call__(self, request: Request) -> str:
        digest = self._prefix.copy()
        digest.update(dumps_canonical(request.cache_payload()).encode("utf-8"))
        digest.update(b"}")
        return digest.hexdigest()


class ResponseCache:
    """Successful responses keyed by :func:`cache_key`, stored in SQLite (WAL).

    Calls are short synchronous transactions guarded by a lock, so one cache may
    be used from many asyncio tasks and threads; other processes coordinate
    through SQLite's own file locks.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            # isolation_level=None: autocommit, each statement is its own transaction.
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL is crash-safe for a killed process in WAL mode; only power loss
            # can drop the last few commits, which costs a re-sent request, never a
            # corrupt database.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.executescript(_DDL)
            self._db.execute("INSERT OR IGNORE INTO meta(name, value) VALUES ('schema', ?)", (CACHE_SCHEMA,))
        except sqlite3.DatabaseError as exc:
            raise DataError(f"cannot open response cache: {exc}", path=self.path) from exc

    def get(self, key: str) -> Response | None:
        """The cached response for ``key``, or None."""
        entry = self.get_entry(key)
        return None if entry is None else entry[0]

    def get_entry(self, key: str) -> tuple[Response, float] | None:
        """The cached response and the seconds its original send took (0 when not recorded)."""
        with self._lock:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = _loads(row[0])
        latency = data.get("latency_s", 0.0)
        return Response.from_json(data), float(latency) if isinstance(latency, int | float) else 0.0

    def put(self, key: str, response: Response, latency_s: float | None = None) -> None:
        """Store a successful response and, when given, how long its send took (for time tables)."""
        record = response.to_json()
        if latency_s is not None:
            record["latency_s"] = round(latency_s, 6)
        value = dumps_canonical(record)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses(key, value, created) VALUES (?, ?, ?)",
                (key, value, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._lock:
            row = self._db.execute("SELECT 1 FROM responses WHERE key = ?", (key,)).fetchone()
        return row is not None

    def close(self) -> None:
        """Checkpoint the WAL into the main file and close the connection."""
        with self._lock:
            # Another process may hold the database; its own checkpoint will do.
            with contextlib.suppress(sqlite3.OperationalError):
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _loads(text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text)
    return data
