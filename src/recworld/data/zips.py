"""Unpacking a dataset zip: only the members a format reads, never more than a size cap.

A 1 MB zip holding a valid ML-100K and a 1 GiB ``zeros.bin`` once put 1.1 GB in
the cache, kept forever. Now a member is unpacked only when its path, at the top
of the zip or under one folder (official zips unpack into ``ml-100k/``), matches
a glob of some format's required or optional files (:data:`FORMATS`); the rest
is never read.

**Invariant.** Unpacking writes at most :data:`MAX_UNPACKED_BYTES` in all, and
no member inflates more than :data:`MAX_RATIO` times its compressed size (plus
:data:`RATIO_SLACK`): the declared sizes are checked before a byte is written,
and the bytes actually written are counted against the same caps, so a member
that lies about its size stops there too (a 1 MB zip whose ``ratings.csv``
is 1 GiB of zeros is refused at once). Every member layout is unpacked or
refused with one :class:`DataError` naming the archive and the member, never
a traceback: a path that would land outside the folder (``../x``, ``/etc/x``),
a name over 255 bytes, a member that is both a file and a folder
(``ratings.csv`` and ``ratings.csv/x``), a damaged, encrypted or
unsupported member. Whatever a failed unpack wrote is removed (it is built in
a staging folder that is only kept whole).

Members are written as regular files from their bytes (a member flagged as a
symbolic link becomes a file holding the link text).
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
# Real dataset tables deflate 3-10x; zeros 1000x. A bomb is refused by ratio long before the size cap.
MAX_RATIO = 100
RATIO_SLACK = 1 << 20  # a small member may inflate more: a few KiB of repeated text is no bomb
_NAME_MAX = 255
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


def _allowed(member: zipfile.ZipInfo) -> int:
    """The most bytes ``member`` may inflate to (its ratio cap)."""
    return member.compress_size * MAX_RATIO + RATIO_SLACK


def _check_layout(chosen: list[zipfile.ZipInfo], archive: Path) -> None:
    """Names over 255 bytes, and a member that is both a file and a folder, are refused."""
    files = {PurePosixPath(m.filename).parts: m.filename for m in chosen}
    for parts, name in files.items():
        for part in parts:
            if len(part.encode("utf-8", "surrogateescape")) > _NAME_MAX:
                raise DataError(
                    f"zip member {name!r}: a name over {_NAME_MAX} bytes cannot be unpacked; refused",
                    path=archive,
                )
        for cut in range(1, len(parts)):
            if parts[:cut] in files:
                raise DataError(
                    f"zip members {files[parts[:cut]]!r} and {name!r}: one is a file inside the other",
                    path=archive,
                )


def _members(zf: zipfile.ZipFile, stage: Path, archive: Path) -> list[zipfile.ZipInfo]:
    """The members to unpack, after the path, layout, size and ratio checks."""
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
    _check_layout(chosen, archive)
    declared = sum(m.file_size for m in chosen)
    if declared > MAX_UNPACKED_BYTES:
        raise DataError(
            f"the zip's dataset files unpack to {declared} bytes, more than {MAX_UNPACKED_BYTES}; refused",
            path=archive,
        )
    for member in chosen:
        if member.file_size > _allowed(member):
            raise DataError(_bomb(member), path=archive)
    return chosen


def _bomb(member: zipfile.ZipInfo) -> str:
    return (
        f"zip member {member.filename!r} inflates more than {MAX_RATIO} times its compressed "
        f"size ({member.compress_size} bytes): a zip bomb, refused"
    )


def unpack(archive: Path, stage: Path) -> None:
    """Unpack the dataset files of ``archive`` into the empty folder ``stage``."""
    try:
        with zipfile.ZipFile(archive) as zf:
            written = 0
            for member in _members(zf, stage, archive):
                written = _unpack_member(zf, member, stage, archive, written)
    except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile) as exc:
        raise DataError(f"not a valid zip file: {exc}", path=archive) from None
    except OSError as exc:
        raise DataError(f"cannot read the zip: {exc.strerror or exc}", path=archive) from None


def _unpack_member(
    zf: zipfile.ZipFile, member: zipfile.ZipInfo, stage: Path, archive: Path, written: int
) -> int:
    destination = stage / member.filename
    mine = 0
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(member) as source, destination.open("wb") as out:
            while chunk := source.read(_COPY_CHUNK):
                written += len(chunk)
                mine += len(chunk)
                if written > MAX_UNPACKED_BYTES:
                    raise DataError(
                        f"zip member {member.filename!r} unpacks past {MAX_UNPACKED_BYTES} bytes; refused",
                        path=archive,
                    )
                if mine > _allowed(member):
                    raise DataError(_bomb(member), path=archive)
                out.write(chunk)
    except NotImplementedError as exc:  # e.g. Deflate64 or PPMd, which zipfile cannot decode
        raise DataError(
            f"zip member {member.filename!r} uses an unsupported compression ({exc})", path=archive
        ) from None
    except RuntimeError as exc:  # encrypted members
        raise DataError(f"zip member {member.filename!r} cannot be read ({exc})", path=archive) from None
    except (FileExistsError, NotADirectoryError, IsADirectoryError) as exc:
        raise DataError(
            f"zip member {member.filename!r} cannot be unpacked: {exc.strerror} "
            "(its folders clash with another member)",
            path=archive,
        ) from None
    except (zipfile.BadZipFile, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
        raise DataError(f"zip member {member.filename!r} is corrupt ({exc})", path=archive) from None
    except OSError as exc:  # a name the file system refuses, a full disk
        reason = exc.strerror or str(exc)
        raise DataError(
            f"zip member {member.filename!r} cannot be unpacked ({reason})", path=archive
        ) from None
    return written


def remove_unpacked(folder: Path) -> None:
    """Delete an unpacked copy whose contents turned out unusable."""
    shutil.rmtree(folder, ignore_errors=True)
