"""Atomic file output: a crash or a kill never leaves a half-written file.

Files are written to a temporary sibling, flushed, fsynced and renamed over
the target. Directories are built in a temporary sibling and renamed into
place as a whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from recworld.errors import DataError


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _default_mode(base: int) -> int:
    """``base`` less the process umask: the mode a plain ``open``/``mkdir`` would give."""
    umask = os.umask(0)
    os.umask(umask)
    return base & ~umask


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, _default_mode(0o666))  # mkstemp makes it private
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def dumps_canonical(obj: Any) -> str:
    """JSON with sorted keys and no spaces: stable bytes for hashing and diffing."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def read_json_object(path: str | Path, *, missing: str = "missing file") -> dict[str, Any]:
    """Read a JSON object, or raise :class:`DataError` naming the file (and line) that is wrong."""
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(missing, path=source) from exc
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path=source, line=exc.lineno) from exc
    if not isinstance(data, dict):
        raise DataError("expected a JSON object", path=source)
    return data


def atomic_write_json(path: str | Path, obj: Any, *, indent: int | None = 2) -> None:
    """Write ``obj`` as JSON (sorted keys, trailing newline) atomically."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=indent)
    atomic_write_text(path, text + "\n")


def atomic_write_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write one canonical JSON object per line atomically; returns the row count."""
    lines = [dumps_canonical(row) for row in rows]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)


@contextlib.contextmanager
def atomic_directory(path: str | Path, *, overwrite: bool = True) -> Iterator[Path]:
    """Build a directory in a temporary sibling and rename it into place on success.

    On any exception the temporary directory is removed and ``path`` is left
    exactly as it was. With ``overwrite`` an existing ``path`` is replaced
    only after the new one is complete.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    staging.chmod(_default_mode(0o777))  # mkdtemp makes it private
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():
        if not overwrite:
            shutil.rmtree(staging, ignore_errors=True)
            raise FileExistsError(target)
        trash = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, trash)
        os.replace(staging, target)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(staging, target)
    _fsync_dir(target.parent)


class Journal:
    """An append-only, fsynced JSON-lines journal: what makes long work resumable.

    Each record is one line, written and fsynced before the next, so a
    ``kill -9`` loses at most the line being written. On load a torn last line
    (no trailing newline) is dropped and cut from the file; an unreadable line
    anywhere else is corruption and raises :class:`DataError` naming
    ``file:line``. Records are keyed by the field ``key``; a later line for the
    same key replaces an earlier one.
    """

    def __init__(self, path: Path, key: str) -> None:
        self.path = Path(path)
        self.key = key
        self._handle: BinaryIO | None = None

    def load(self) -> dict[str, dict[str, Any]]:
        """Read every whole record, repairing a line torn by a kill."""
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        records: dict[str, dict[str, Any]] = {}
        good_end = 0
        # The piece after the final newline is empty, or a line torn by a kill: skip it.
        for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
            try:
                record = json.loads(raw)
                records[str(record[self.key])] = record
            except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
                # A line with its newline was written whole, so garbage here is corruption.
                raise DataError(f"unreadable journal line ({exc})", path=self.path, line=number) from exc
            good_end += len(raw) + 1
        if good_end != len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
                handle.flush()
                os.fsync(handle.fileno())
        return records

    def append(self, record: Mapping[str, Any]) -> None:
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
