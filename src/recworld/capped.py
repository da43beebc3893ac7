"""The one place a file is opened: a regular file only, and a read bounded in size and line length.

**Invariant.** Every file recworld opens, to read or to append (``--config``,
``--prices``, scripts, manifests, question and sample files, ``run.json``, the
run's journal and ``recworld.log``, the ownership key, dataset tables), is
opened by :func:`open_fd` and is a regular file by then: a device, a FIFO, a
socket or a directory is one :class:`DataError` naming it, never a hang; and
no read takes more memory than its cap: a file over :func:`read_capped`'s
``limit``, or one line over :func:`iter_lines`' ``limit``, is one
:class:`DataError` naming the file (and line), found while reading at most
the cap plus one byte.

``read_text`` reads until end of file, and a device or a FIFO has none:
``--config /dev/zero`` once hung while memory grew; a FIFO named
``recworld.log`` in a crafted run folder hung ``eval`` in the append. So:

* the path is opened non-blocking, so a FIFO without a writer or reader cannot
  hang the open (a link is followed unless ``follow=False``);
* it must then be a regular file, checked on the open descriptor (``fstat``),
  not on the name;
* it is read up to a cap, and a file (or a line) over the cap is refused,
  never silently cut.

The same goes for the two other ways a file is read whole: :func:`sha256_file`
streams it (a megabyte at a time, whatever its size), and :func:`read_image`
reads a local image reference (:func:`is_remote` tells one from a URL) up to
:data:`IMAGE_LIMIT`, after its first bytes show an image signature. Every
caller that hashes a file or reads an image (dataset sources, output markers,
exports, the response cache's image key, the model backends, the dataset's
image checks) goes through them.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from recworld.errors import DataError

MiB = 1 << 20
# A hand-written settings file: eval.toml, a price list, a scripted model's rules.
SETTINGS_LIMIT = 8 * MiB
# A JSON object file (manifest.json, metrics.json, run.json).
RECORD_LIMIT = 256 * MiB
# One line of a JSON-lines file; samples.jsonl lines carry whole replies (16 MiB each at most).
LINE_LIMIT = 64 * MiB
# One line of a dataset table (ratings.csv, u.item): the longest real one is a few KiB.
TABLE_LINE_LIMIT = 1 * MiB
# A whole dataset file read at once (the Netflix Prize's titles, Last.fm's tags): a bound, not a budget.
DATASET_FILE_LIMIT = 8 << 30
# One local image sent to a model: far above any poster; LLaVA-1.6 tiles at most 672x1344 pixels.
IMAGE_LIMIT = 20 * MiB
_HASH_CHUNK = MiB
_IMAGE_HEAD = 12
# "http://", "s3://", "data:" ...; a one-letter scheme is a Windows drive ("C:\\"), not a URL.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")

__all__ = [
    "DATASET_FILE_LIMIT",
    "IMAGE_LIMIT",
    "LINE_LIMIT",
    "RECORD_LIMIT",
    "SETTINGS_LIMIT",
    "TABLE_LINE_LIMIT",
    "RefusedFileError",
    "check_line_lengths",
    "check_regular",
    "is_remote",
    "iter_lines",
    "open_fd",
    "open_regular",
    "open_text",
    "read_capped",
    "read_capped_text",
    "read_image",
    "sha256_file",
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


def open_fd(path: str | Path, flags: int = os.O_RDONLY, *, follow: bool = True, mode: int = 0o666) -> int:
    """A descriptor of ``path`` opened with ``flags``, blocking; DataError unless it is a regular file.

    ``O_NONBLOCK`` is added for the open itself (a FIFO cannot hang it), then
    cleared. With ``follow=False`` a symbolic link is refused (``O_NOFOLLOW``).
    A missing file raises ``FileNotFoundError`` so each caller words it.
    """
    source = Path(path)
    extra = os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(source, flags | extra, mode)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if not follow and os.path.islink(source):
            raise DataError(
                "is a symbolic link; recworld never reads or writes through one", path=source
            ) from None
        try:  # a FIFO without a reader, a socket: ENXIO says less than the kind does
            kind = os.stat(source).st_mode
        except OSError:
            kind = stat.S_IFREG
        if not stat.S_ISREG(kind):
            raise DataError(
                f"is {_kind(kind)}, not a regular file; refusing to open it", path=source
            ) from None
        raise DataError(f"cannot open: {exc.strerror}", path=source) from None
    try:
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            raise DataError(f"is {_kind(kind)}, not a regular file; refusing to open it", path=source)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | Path, *, missing: str = "missing file", follow: bool = True) -> BinaryIO:
    """``path`` opened for binary reading (:func:`open_fd`); ``missing`` words a path that does not exist."""
    source = Path(path)
    try:
        fd = open_fd(source, follow=follow)
    except FileNotFoundError:
        raise DataError(missing, path=source) from None
    except NotADirectoryError:
        raise DataError(missing, path=source) from None
    return os.fdopen(fd, "rb")


def open_text(path: str | Path, encoding: str = "utf-8", *, newline: str | None = None) -> TextIO:
    """``path`` opened for reading text (:func:`open_regular`: a regular file or one DataError)."""
    return io.TextIOWrapper(open_regular(path), encoding=encoding, newline=newline)


def check_regular(path: str | Path, *, missing: str = "missing file") -> Path:
    """``path``, after checking that it is a regular file (for a library that opens it by name)."""
    open_regular(path, missing=missing).close()
    return Path(path)


def _too_large(limit: int, source: Path, line: int | None = None) -> DataError:
    what = "line" if line is not None else "file"
    return DataError(f"{what} larger than {limit} bytes; refusing to read it", path=source, line=line)


def read_capped(path: str | Path, *, limit: int, missing: str = "missing file", follow: bool = True) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (DataError otherwise)."""
    source = Path(path)
    with open_regular(source, missing=missing, follow=follow) as handle:
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


def sha256_file(path: str | Path, *, follow: bool = True, missing: str = "missing file") -> str:
    """SHA-256 hex of a regular file's bytes, streamed (memory stays near a megabyte whatever its size).

    A device, a FIFO or a directory is one DataError (:func:`open_fd`); with
    ``follow=False`` so is a symbolic link.
    """
    digest = hashlib.sha256()
    with open_regular(path, missing=missing, follow=follow) as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def is_remote(reference: str) -> bool:
    """True when an image reference is a URL (any scheme, ``data:`` included) rather than a file path."""
    return bool(_SCHEME.match(reference))


def _image_format(head: bytes) -> str | None:
    """The format (Pillow's name) whose signature starts ``head``: PNG, JPEG, GIF, WEBP; else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "GIF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    return None


class RefusedFileError(DataError):
    """A file :func:`read_image` does not read; ``reason`` is a few words (what callers count)."""

    def __init__(self, reason: str, path: Path, why: str = "") -> None:
        self.reason = reason
        self.why = why
        super().__init__(f"{reason}: {why}" if why else reason, path=path)


def _open_image(path: Path) -> BinaryIO:
    """The one place an image file is opened (tests watch it to prove refused files are never read)."""
    return open_regular(path)


def read_image(path: str | Path, *, limit: int | None = None) -> tuple[bytes, str]:
    """The bytes and format of a local image file: a regular file of at most ``limit`` bytes (IMAGE_LIMIT).

    Its first bytes must be an image signature (:func:`_image_format`), checked
    before any other byte is read, so a text file named ``x.png`` is never read
    whole (nor sent anywhere). Anything else is one :class:`RefusedFileError` whose
    reason is "missing", "not a regular file", "too large", "not an image" or "unreadable".
    """
    source = Path(path)
    limit = IMAGE_LIMIT if limit is None else limit
    try:
        info = source.stat()
    except OSError as exc:
        raise RefusedFileError("missing", source, exc.strerror or "") from None
    if not stat.S_ISREG(info.st_mode):
        raise RefusedFileError("not a regular file", source)
    if info.st_size > limit:
        raise RefusedFileError("too large", source, f"{info.st_size} bytes > {limit}")
    try:
        with _open_image(source) as handle:
            head = handle.read(_IMAGE_HEAD)
            fmt = _image_format(head)
            if fmt is None:
                raise RefusedFileError("not an image", source, "no PNG/JPEG/GIF/WebP signature")
            data = head + handle.read(limit + 1 - len(head))  # it may have grown since the stat
    except OSError as exc:
        raise RefusedFileError("unreadable", source, exc.strerror or "") from None
    except RefusedFileError:
        raise
    except DataError as exc:  # replaced by a FIFO or a device between the stat and the open
        raise RefusedFileError("not a regular file", source, exc.detail) from None
    if len(data) > limit:
        raise RefusedFileError("too large", source, f"more than {limit} bytes")
    return data, fmt


def iter_lines(handle: BinaryIO, path: str | Path, *, limit: int = LINE_LIMIT) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` of an open file, refusing a line longer than ``limit`` bytes."""
    number = 0
    while raw := handle.readline(limit + 1):
        number += 1
        if len(raw) > limit:
            raise _too_large(limit, Path(path), line=number)
        yield number, raw


def check_line_lengths(
    path: str | Path, *, limit: int = TABLE_LINE_LIMIT, chunk: int = 4 * MiB, upto: int | None = None
) -> None:
    """Refuse a file holding a line over ``limit`` bytes (DataError naming it), reading ``chunk`` at a time.

    The check before a table goes to a parser that would hold a whole line in
    memory (pandas' C reader): a 2 GiB line is found after ``limit`` bytes, and
    memory stays near ``chunk`` whatever the file holds. With ``upto``, only the
    file's first ``upto`` bytes are read (a cheap look before the file is hashed).
    """
    import numpy as np  # only the table readers need it

    source = Path(path)
    number, run = 1, 0  # the line being read and its length so far
    left = -1 if upto is None else upto  # bytes still to read (-1: all)
    with open_regular(source) as handle:
        while left and (block := handle.read(chunk if left < 0 else min(chunk, left))):
            left = left - len(block) if left > 0 else left
            ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
            if not ends.size:
                run += len(block)
                if run > limit:
                    raise _too_large(limit, source, line=number)
                continue
            if run + int(ends[0]) > limit:
                raise _too_large(limit, source, line=number)
            over = np.flatnonzero(np.diff(ends) - 1 > limit)
            if over.size:
                raise _too_large(limit, source, line=number + 1 + int(over[0]))
            number += int(ends.size)
            run = len(block) - int(ends[-1]) - 1
    if run > limit:
        raise _too_large(limit, source, line=number)
