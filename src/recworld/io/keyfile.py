"""Secret key files: made once, whole, and read back only as a key of the right length.

**Invariant.** :func:`load_or_make_key` returns exactly ``nbytes`` bytes, and
the same bytes on every later call, in any process, for as long as the file
stays; or it raises one :class:`~recworld.errors.DataError` naming the file.
It never returns a short or empty key. Whatever is at the path beforehand:

* nothing: a fresh random key is written to a private temporary sibling
  (``O_EXCL | O_NOFOLLOW``, mode 0600), fsynced, then hard-linked into place,
  so the path holds either no file or a whole key at every instant (a kill
  between two steps leaves at most a stray ``.NAME.*`` temporary); of two
  processes making one at once, the link of the second fails and both return
  the first's key;
* a key: ``2 * nbytes`` hex digits (what ``openssl rand -hex`` prints, a
  trailing newline allowed), which is what this module writes, or exactly
  ``nbytes`` raw bytes not all hex digits (the ownership key's first format):
  it is returned;
* anything else (an empty, short, long or non-hex file, a symbolic link, a
  directory, a FIFO, a device) is a DataError: never read through, never
  replaced, since a run's outputs may depend on the key that was there.

Where the key cannot be written (a read-only folder) the caller chooses:
a DataError naming the file, or (``memory_if_unwritable``) a fresh key that
lives only in this process.

This module sits below :mod:`recworld.io.proof` (whose ownership key it
keeps), so it writes without the sealed temporary names of
:mod:`recworld.io.files`, which need that key.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import string
from pathlib import Path

from recworld.capped import read_capped
from recworld.errors import DataError

__all__ = ["load_or_make_key"]

_HEX = frozenset(string.hexdigits.encode())


def load_or_make_key(path: Path, nbytes: int, *, memory_if_unwritable: bool = False) -> bytes:
    """The ``nbytes``-byte key in ``path``, made there on first use (module docstring)."""
    if nbytes < 1:
        raise ValueError("a key has at least one byte")
    found = _read(path, nbytes)
    if found is not None:
        return found
    fresh = secrets.token_bytes(nbytes)
    try:
        _make(path, fresh)
    except OSError as exc:
        if memory_if_unwritable:
            return fresh
        raise DataError(f"cannot write the key file: {exc.strerror or exc}", path=path) from None
    found = _read(path, nbytes)
    if found is None:  # removed again at once by someone else
        raise DataError("the key file vanished while it was being made", path=path)
    return found


def _read(path: Path, nbytes: int) -> bytes | None:
    """The key in ``path``; None when nothing is there; DataError for anything but a key."""
    if not os.path.lexists(path):
        return None
    data = read_capped(path, limit=2 * nbytes + 2, follow=False, missing="missing key file")
    text = data.rstrip(b"\r\n")
    if len(text) == 2 * nbytes and set(text) <= _HEX:
        return bytes.fromhex(text.decode("ascii"))
    if len(data) == nbytes and not set(data) <= _HEX:  # hex digits are only ever read as hex
        return data
    raise DataError(
        f"is not a key of {nbytes} bytes ({len(data)} bytes, not {2 * nbytes} hex digits); "
        "move it away to make a fresh key (what was made with the old one is then keyed differently)",
        path=path,
    )


def _make(path: Path, key: bytes) -> None:
    """Write ``key`` (as hex) whole at ``path`` unless a file is already there (then leave that one)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o600)
    try:
        try:
            pending = key.hex().encode("ascii") + b"\n"
            while pending:
                pending = pending[os.write(fd, pending) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):  # another process made one first: that one stands
            os.link(temp, path, follow_symlinks=False)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
