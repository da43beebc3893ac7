"""An append-only, fsynced journal of finished image descriptions: what makes describing resumable.

One JSON line per described item, fsynced before the next, so a kill loses at
most the line being written. A torn last line is dropped and cut on load; a bad
line elsewhere is corruption and raises :class:`DataError` naming ``file:line``.
A later line for an item replaces an earlier one (an image that changed is
described again and appended).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, BinaryIO

from recworld.errors import DataError
from recworld.io import dumps_canonical


class DescriptionJournal:
    """Description records keyed by ``item_id``."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._handle: BinaryIO | None = None

    def load(self) -> dict[str, dict[str, Any]]:
        """Read every whole record, repairing a line torn by a kill."""
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        records: dict[str, dict[str, Any]] = {}
        good_end = 0
        for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
            try:
                record = json.loads(raw)
                item_id = str(record["item_id"])
            except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
                raise DataError(f"unreadable journal line ({exc})", path=self.path, line=number) from exc
            records[item_id] = record
            good_end += len(raw) + 1
        if good_end != len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
                handle.flush()
                os.fsync(handle.fileno())
        return records

    def append(self, record: dict[str, Any]) -> None:
        """Write one record and fsync it before returning."""
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("ab")
        self._handle.write((dumps_canonical(record) + "\n").encode("utf-8"))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
