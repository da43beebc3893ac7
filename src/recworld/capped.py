"""Bounded reads of the files a user points a command at: a regular file, up to a size cap.

``read_text`` reads until end of file, and a device or a FIFO has none:
``--config /dev/zero`` once hung while memory grew. Every file the CLI reads
(``--config``, ``--prices``, ``scripted:`` scripts, manifests, question and
sample files, through :func:`recworld.io.read_json_object` and
:func:`recworld.io.iter_json_lines`) comes through here:

* it is opened non-blocking, so a FIFO without a writer cannot hang the open;
* it must then be a regular file (symbolic links are followed); a device, a
  FIFO, a socket or a directory is one :class:`DataError` naming it;
* it is read up to a cap, and a file (or a JSON-lines record) over the cap is
  refused, never silently cut.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from recworld.errors import DataError

MiB = 1 << 20
# A hand-written settings file: eval.toml, a price list, a scripted model's rules.
SETTINGS_LIMIT = 8 * MiB
# A JSON object file (manifest.json, metrics.json, run.json).
RECORD_LIMIT = 256 * MiB
# One line of a JSON-lines file; samples.jsonl lines carry whole replies (16 MiB each at most).
LINE_LIMIT = 64 * MiB

__all__ = [
    "LINE_LIMIT",
    "RECORD_LIMIT",
    "SETTINGS_LIMIT",
    "iter_lines",
    "open_regular",
    "read_capped",
    "read_capped_text",
]


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular(path: str | Path, *, missing: str = "missing file") -> BinaryIO:
    """``path`` opened for binary reading; DataError unless it is a regular file.

    ``missing`` is the message for a path that does not exist.
    """
    source = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(source, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise DataError(missing, path=source) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", path=source) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise DataError(f"is {_kind(mode)}, not a regular file; refusing to read it", path=source)
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _too_large(limit: int, source: Path, line: int | None = None) -> DataError:
    what = "line" if line is not None else "file"
    return DataError(f"{what} larger than {limit} bytes; refusing to read it", path=source, line=line)


def read_capped(path: str | Path, *, limit: int, missing: str = "missing file") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (DataError otherwise)."""
    source = Path(path)
    with open_regular(source, missing=missing) as handle:
        if os.fstat(handle.fileno()).st_size > limit:
            raise _too_large(limit, source)
        data = handle.read(limit + 1)  # the file may grow between the stat and the read
    if len(data) > limit:
        raise _too_large(limit, source)
    return data


def read_capped_text(path: str | Path, *, limit: int, missing: str = "missing file") -> str:
    """UTF-8 text of a regular file of at most ``limit`` bytes; bad UTF-8 is a DataError naming the byte."""
    source = Path(path)
    data = read_capped(source, limit=limit, missing=missing)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"not valid UTF-8 text (byte {exc.start})", path=source, line=line) from None


def iter_lines(handle: BinaryIO, path: str | Path, *, limit: int = LINE_LIMIT) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` of an open file, refusing a line longer than ``limit`` bytes."""
    number = 0
    while raw := handle.readline(limit + 1):
        number += 1
        if len(raw) > limit:
            raise _too_large(limit, Path(path), line=number)
        yield number, raw
