"""Carrying what an output's writer did not write across a replacement of that output.

**Invariant.** When a command replaces its own output folder
(:func:`recworld.io.swap.atomic_directory` with ``carry``), every file of the
old folder, at every depth, is kept unless the new folder holds the same path
or the old marker proves it the writer's (:func:`owned_by`): listed under a
safe relative path, with the bytes the marker recorded (size and SHA-256). A
marker is untrusted input: a forged list naming a user's ``notes.txt`` or
``runs/...`` cannot know the bytes of a file the user writes there later, so
such a file is carried, never lost.
Before the swap the entries are hard-linked (so the old folder stays whole);
after it, moved.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from recworld.capped import sha256_file
from recworld.errors import ConfigError, DataError
from recworld.io.marker import CLAIM_FILE, OUTPUT_MARKER, read_marker

__all__ = ["Owned", "digest", "digests", "keep_foreign", "listed_files", "owned_by"]


@dataclass(frozen=True)
class Owned:
    """The relative paths of an old output that its writer wrote (so they are not carried over)."""

    files: frozenset[str] = frozenset()

    def __call__(self, relative: str) -> bool:
        return relative in self.files

    def under(self, relative: str) -> bool:
        prefix = relative + "/"
        return any(f.startswith(prefix) for f in self.files)


def digest(path: Path) -> tuple[int, str] | None:
    """``(size, SHA-256)`` of the regular file ``path`` (a link: of its text); None when absent or neither."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            text = os.fsencode(os.readlink(path))
            return (len(text), hashlib.sha256(text).hexdigest())
        if not stat.S_ISREG(info.st_mode):
            return None
        return (info.st_size, sha256_file(path, follow=False))
    except (OSError, DataError):
        return None


def digests(folder: Path, files: Collection[str]) -> dict[str, tuple[int, str]]:
    """The digest of each of ``files`` (relative to ``folder``), for an output's marker."""
    found = {relative: digest(folder / relative) for relative in files}
    return {relative: value for relative, value in found.items() if value is not None}


def _safe(relative: str) -> bool:
    """A plain relative path below the folder: no ``..``, no root, no empty or ``.`` part, no NUL."""
    if not relative or "\0" in relative or relative.startswith("/"):
        return False
    parts = relative.split("/")
    return all(p not in {"", ".", ".."} for p in parts) and PurePosixPath(relative).as_posix() == relative


def _still_written(old: Path, relative: str, recorded: tuple[int, str]) -> bool:
    try:
        if os.lstat(old / relative).st_size != recorded[0]:
            return False  # cheap first: a file the user rewrote rarely keeps its size
    except OSError:
        return False
    return digest(old / relative) == tuple(recorded)


def owned_by(old: Path) -> Owned:
    """The files of ``old`` its marker proves are its writer's.

    A file counts when the marker lists it under a safe relative path and its
    bytes still match the size and SHA-256 recorded when it was written: a
    forged list naming a user's ``notes.txt`` or ``runs/.../samples.jsonl``
    cannot know the bytes the user writes there later. Nothing for a folder
    without a marker, or with one that records no digests (a first-version
    one, one filled in place): then everything the new output lacks is kept.
    """
    marker = read_marker(old)
    if marker is None or not marker.digests:
        return Owned()
    proven = frozenset(
        relative
        for relative, recorded in marker.digests.items()
        if _safe(relative) and _still_written(old, relative, recorded)
    )
    return Owned(proven)


_NEVER_CARRIED = frozenset({OUTPUT_MARKER, CLAIM_FILE})


def keep_foreign(old: Path, new: Path, owned: Owned, *, move: bool) -> None:
    """Put into ``new`` each entry of ``old`` that ``owned`` does not claim and ``new`` lacks, at any depth.

    ``move`` renames entries (after a swap: ``old`` is going); otherwise they are
    hard-linked (or copied) so ``old`` stays whole until the swap. Before a swap a
    foreign entry in the way of what the new output writes (a user's folder where
    it writes a file) is a :class:`ConfigError` rather than a loss.
    """
    _keep(old, new, "", owned, move)


def _keep(old: Path, new: Path, prefix: str, owned: Owned, move: bool) -> None:
    for entry in sorted(os.scandir(old), key=lambda e: e.name):
        relative = prefix + entry.name
        if not prefix and entry.name in _NEVER_CARRIED:
            continue
        source, dest = Path(entry.path), new / entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and dest.is_dir() and not dest.is_symlink():
            _keep(source, dest, relative + "/", owned, move)
            continue
        if not _has_foreign(source, relative, owned, is_dir):
            continue
        if os.path.lexists(dest):
            if (is_dir or dest.is_dir()) and not move:
                raise ConfigError(
                    f"{source}: in the way of {dest.name!r}, which this command writes there; "
                    "move it and rerun (nothing was changed)"
                )
            continue  # the same file, written anew: the new output's
        if is_dir and owned.under(relative):
            dest.mkdir()
            _keep(source, dest, relative + "/", owned, move)
        else:
            _transfer(source, dest, is_dir=is_dir, move=move)


def _has_foreign(source: Path, relative: str, owned: Owned, is_dir: bool) -> bool:
    if not is_dir:
        return not owned(relative)
    if not owned.under(relative):
        return True
    entries = list(os.scandir(source))
    if not entries:
        return not owned(relative)
    return any(
        _has_foreign(Path(e.path), f"{relative}/{e.name}", owned, e.is_dir(follow_symlinks=False))
        for e in entries
    )


def _transfer(source: Path, dest: Path, *, is_dir: bool, move: bool) -> None:
    if move:
        os.replace(source, dest)
    elif source.is_symlink():
        os.symlink(os.readlink(source), dest)
    elif is_dir:
        shutil.copytree(source, dest, symlinks=True, copy_function=_link_or_copy)
    else:
        _link_or_copy(str(source), str(dest))


def _link_or_copy(source: str, destination: str) -> str:
    """A hard link (instant, byte-identical, no extra space), or a copy where links are refused."""
    try:
        os.link(source, destination, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, destination, follow_symlinks=False)
    return destination


def listed_files(folder: Path, skip: Collection[str] = _NEVER_CARRIED) -> list[str]:
    """Every file and link below ``folder`` as a relative POSIX path (what a marker lists)."""
    found = []
    for root, dirs, names in os.walk(folder):
        here = Path(root)
        for name in [*names, *(d for d in dirs if (here / d).is_symlink())]:
            relative = (here / name).relative_to(folder).as_posix()
            if relative not in skip:
                found.append(relative)
    return sorted(found)
