"""An append-only, fsynced journal of finished samples: what makes a run resumable.

Each finished sample is one JSON line, written and fsynced before the next
one, so a ``kill -9`` loses at most the line being written. On restart a
truncated last line (no trailing newline, or not JSON) is dropped and cut from
the file; a bad line anywhere else is corruption and raises
:class:`~recworld.errors.DataError` naming ``file:line``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, BinaryIO

from recworld.errors import DataError
from recworld.io import dumps_canonical


class SampleJournal:
    """Samples keyed by ``question_id``; a later line for the same id replaces an earlier one."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._handle: BinaryIO | None = None

    def load(self) -> dict[str, dict[str, Any]]:
        """Read the journal, repairing a torn last line; returns samples by question id."""
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        samples: dict[str, dict[str, Any]] = {}
        good_end = 0
        lines = data.split(b"\n")
        # The piece after the final newline is empty, or a line torn by a kill: skip it.
        for number, raw in enumerate(lines[:-1], start=1):
            try:
                sample = json.loads(raw)
                qid = sample["question_id"]
            except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
                # A line with its newline was written whole, so garbage here is corruption.
                raise DataError(f"unreadable journal line ({exc})", path=self.path, line=number) from exc
            samples[str(qid)] = sample
            good_end += len(raw) + 1
        if good_end != len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
                handle.flush()
                os.fsync(handle.fileno())
        return samples

    def append(self, sample: dict[str, Any]) -> None:
        """Write one sample and fsync it before returning."""
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("ab")
        self._handle.write((dumps_canonical(sample) + "\n").encode("utf-8"))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
