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
from typing import Any


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
