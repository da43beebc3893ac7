"""Unpacking a dataset zip: only the members a format reads, never more than a size cap.

A 1 MB zip holding a valid ML-100K and a 1 GiB ``zeros.bin`` once put 1.1 GB in
the cache, kept forever. Now a member is unpacked only when its path, at the top
of the zip or under one folder (official zips unpack into ``ml-100k/``), matches
a glob of some format's required or optional files (:data:`FORMATS`); the rest
is never read. The declared sizes of those members must sum to at most
:data:`MAX_UNPACKED_BYTES`, and the bytes actually written are counted against
the same cap, so a member that lies about its size stops there too.

Members are written as regular files from their bytes (a member flagged as a
symbolic link becomes a file holding the link text), and a path that would land
outside the folder (``../x``, ``/etc/x``) refuses the whole archive. Every
failure is one :class:`DataError` naming the archive and the member; a folder
half built is removed.
"""

from __future__ import annotations

import fnmatch
import lzma
import shutil
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from recworld.data.formats import FORMATS
from recworld.errors import DataError

MAX_UNPACKED_BYTES = 8 << 30  # ML-25M's files come to 0.7 GB, the Netflix Prize's to 2 GB
_COPY_CHUNK = 1 << 20


def _patterns() -> list[tuple[str, ...]]:
    return [tuple(p.split("/")) for fmt in FORMATS.values() for p in (*fmt.required, *fmt.optional)]


def wanted(name: str) -> bool:
    """True when the member ``name`` is a file some format reads, at the top or under one folder."""
    parts = PurePosixPath(name).parts
    for offset in (0, 1):
        tail = parts[offset:]
        for pattern in _patterns():
            if len(tail) == len(pattern) and all(
                fnmatch.fnmatchcase(part, glob) for part, glob in zip(tail, pattern, strict=True)
            ):
                return True
    return False


def _members(zf: zipfile.ZipFile, stage: Path, archive: Path) -> list[zipfile.ZipInfo]:
    """The members to unpack, after the path and size checks."""
    root = stage.resolve()
    chosen: list[zipfile.ZipInfo] = []
    for member in zf.infolist():
        # Refuse members that would land outside the folder ("../x", "/etc/x").
        if not (stage / member.filename).resolve().is_relative_to(root):
            raise DataError(f"unsafe path in zip: {member.filename!r}", path=archive)
        if not member.is_dir() and wanted(member.filename):
            chosen.append(member)
    if not chosen:
        raise DataError("the zip holds no file that any dataset format reads", path=archive)
    declared = sum(m.file_size for m in chosen)
    if declared > MAX_UNPACKED_BYTES:
        raise DataError(
            f"the zip's dataset files unpack to {declared} bytes, more than {MAX_UNPACKED_BYTES}; refused",
            path=archive,
        )
    return chosen


def unpack(archive: Path, stage: Path) -> None:
    """Unpack the dataset files of ``archive`` into the empty folder ``stage``."""
    try:
        with zipfile.ZipFile(archive) as zf:
            written = 0
            for member in _members(zf, stage, archive):
                written = _unpack_member(zf, member, stage, archive, written)
    except (zipfile.BadZipFile, EOFError) as exc:
        raise DataError(f"not a valid zip file: {exc}", path=archive) from None


def _unpack_member(
    zf: zipfile.ZipFile, member: zipfile.ZipInfo, stage: Path, archive: Path, written: int
) -> int:
    destination = stage / member.filename
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        with zf.open(member) as source, destination.open("wb") as out:
            while chunk := source.read(_COPY_CHUNK):
                written += len(chunk)
                if written > MAX_UNPACKED_BYTES:
                    raise DataError(
                        f"zip member {member.filename!r} unpacks past {MAX_UNPACKED_BYTES} bytes; refused",
                        path=archive,
                    )
                out.write(chunk)
    except NotImplementedError as exc:  # e.g. Deflate64 or PPMd, which zipfile cannot decode
        raise DataError(
            f"zip member {member.filename!r} uses an unsupported compression ({exc})", path=archive
        ) from None
    except RuntimeError as exc:  # encrypted members
        raise DataError(f"zip member {member.filename!r} cannot be read ({exc})", path=archive) from None
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error, lzma.LZMAError) as exc:
        raise DataError(f"zip member {member.filename!r} is corrupt ({exc})", path=archive) from None
    return written


def remove_unpacked(folder: Path) -> None:
    """Delete an unpacked copy whose contents turned out unusable."""
    shutil.rmtree(folder, ignore_errors=True)
