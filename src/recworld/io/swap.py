"""Folder swaps that no kill can lose: build beside, journal, exchange, carry, recover on the next run.

:func:`atomic_directory` builds a folder in a hidden sibling (``.NAME.xxxxxxxx.partial``)
and puts it in place only when it is whole:

1. the swap is journaled (``.NAME.swap.json`` beside it: the staging and trash
   names and the staging folder's inode, which renames keep);
2. the two folders are exchanged in one step (``renameat2(RENAME_EXCHANGE)``,
   Linux) where the file system allows, otherwise the old one is renamed aside
   (``.NAME.old-TOKEN``) and the new one into place;
3. with ``carry``, what the old folder held and the new one lacks is kept
   (:func:`keep_foreign`): hard-linked in before the swap, and anything that
   arrived since moved over after it;
4. the old folder is removed, then the journal.

Every entry point first calls :func:`recover`, under an ``flock`` of the parent
folder: a journaled swap that a kill interrupted is finished (the new folder put
in place, the old one's foreign files carried over), a trash folder left without
a journal (a kill in an older version, a reused PID) gives back what it holds,
and a staging folder whose builder is dead is removed. So nothing is lost at any
kill point and nothing stale is fatal. A live builder holds an ``flock`` on its
staging folder, which is how :func:`recover` tells it from a dead one.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import os
import re
import secrets
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recworld.errors import DataError
from recworld.io.carry import keep_foreign, owned_by
from recworld.io.files import (
    atomic_write_json,
    default_mode,
    fault_point,
    fsync_dir,
    normal,
    sweep_temporary,
)
from recworld.io.jsonl import read_json_object

__all__ = [
    "USE_EXCHANGE",
    "atomic_directory",
    "parent_lock",
    "recover",
]

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_HELD: set[Path] = set()  # staging folders this process is building (nested swaps skip them)
_HELD_LOCK = threading.Lock()
USE_EXCHANGE = True  # the tests turn it off to run the two-rename path


class _SwapRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_id: str = Field(default="recworld.swap/1", alias="schema")
    staging: str
    trash: str
    new: tuple[int, int]  # (st_dev, st_ino) of the staged folder: renames keep it
    carry: bool


def _journal_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.swap.json")


def _staging_name(target: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(target.name)}\.[a-z0-9_]{{8}}\.partial")


def _trash_name(target: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(target.name)}\.old-[A-Za-z0-9]+")


@contextlib.contextmanager
def parent_lock(target: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``target``'s parent folder: one swap or recovery there at a time."""
    parent = target.parent
    with _HELD_LOCK:
        nested = parent in _HELD
    if nested:  # inside our own staging folder no other process looks
        yield
        return
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _alive(staging: Path) -> bool:
    """Whether a builder still holds ``staging`` (its ``flock``); a dead one's lock went with it."""
    try:
        fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _new_staging(target: Path) -> tuple[Path, int]:
    """A fresh staging folder beside ``target``, and the descriptor holding its ``flock``.

    Called under :func:`parent_lock`: between ``mkdtemp`` and the ``flock`` the
    folder looks dead, and only the parent lock keeps a concurrent
    :func:`recover` (another command writing the same cache entry) from removing it.
    """
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        fd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # alive while held: recover() leaves it be
        staging.chmod(default_mode(0o777))  # mkdtemp makes it private
    except BaseException:
        os.close(fd)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return staging, fd


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    return (info.st_dev, info.st_ino)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    if not USE_EXCHANGE:
        return False
    libc = _libc()
    if libc is None or not hasattr(libc, "renameat2"):
        return False
    done = libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)


_LIBC: list[ctypes.CDLL | None] = []


def _libc() -> ctypes.CDLL | None:
    if not _LIBC:
        name = ctypes.util.find_library("c")
        _LIBC.append(ctypes.CDLL(name, use_errno=True) if name else None)
    return _LIBC[0]


def recover(target: str | Path) -> None:
    """Finish or undo whatever a killed swap of ``target`` left; clean dead staging folders."""
    target = normal(target)
    if not target.parent.is_dir():
        return
    with parent_lock(target):
        _recover_locked(target)


def _recover_locked(target: Path) -> None:
    journal = _journal_path(target)
    if journal.is_file():
        _finish(target, journal)
    siblings = sorted(target.parent.iterdir(), key=lambda p: p.name)
    for trash in (p for p in siblings if _trash_name(target).fullmatch(p.name)):
        if not os.path.lexists(target):  # a kill between two renames: the last whole output returns
            os.replace(trash, target)
            continue
        keep_foreign(trash, target, owned_by(trash), move=True)
        shutil.rmtree(trash, ignore_errors=True)
    for staging in (p for p in siblings if _staging_name(target).fullmatch(p.name)):
        if staging.exists() and not _alive(staging):
            shutil.rmtree(staging, ignore_errors=True)
    sweep_temporary(target.parent, prefix=f".{target.name}.swap.json.", deep=False)
    fsync_dir(target.parent)


def _finish(target: Path, journal: Path) -> None:
    try:
        record = _SwapRecord.model_validate(read_json_object(journal))
    except (DataError, ValidationError):  # torn before it was whole: nothing was renamed yet
        journal.unlink()
        return
    staging, trash = target.with_name(record.staging), target.with_name(record.trash)
    new = tuple(record.new)
    if _identity(staging) == new:  # not placed yet: finish the swap
        _place(target, staging, trash)
    elif _identity(target) != new and not os.path.lexists(target) and trash.exists():
        os.replace(trash, target)  # the new folder is gone: the old one comes back
    for old in (staging, trash):
        if os.path.lexists(old) and _identity(old) != new:
            if record.carry and _identity(target) == new:
                keep_foreign(old, target, owned_by(old), move=True)
            shutil.rmtree(old, ignore_errors=True)
    journal.unlink()


def _place(target: Path, staging: Path, trash: Path) -> None:
    """Put ``staging`` at ``target``; the old folder ends at ``staging`` (exchanged) or ``trash``."""
    if not os.path.lexists(target):
        os.replace(staging, target)
    elif not _exchange(staging, target):
        os.replace(target, trash)
        fault_point("swap.old-moved", target)
        os.replace(staging, target)
    fault_point("swap.placed", target)


def _swap(target: Path, staging: Path, *, carry: bool) -> None:
    trash = target.with_name(f".{target.name}.old-{secrets.token_hex(6)}")
    identity = _identity(staging)
    assert identity is not None
    record = _SwapRecord(staging=staging.name, trash=trash.name, new=identity, carry=carry)
    journal = _journal_path(target)
    atomic_write_json(journal, record.model_dump(mode="json", by_alias=True))
    fault_point("swap.journaled", target)
    _place(target, staging, trash)
    for old in (staging, trash):
        if os.path.lexists(old):
            if carry:
                keep_foreign(old, target, owned_by(old), move=True)
                fault_point("swap.swept", target)
            shutil.rmtree(old, ignore_errors=True)
    journal.unlink()
    fsync_dir(target.parent)


@contextlib.contextmanager
def atomic_directory(path: str | Path, *, overwrite: bool = True, carry: bool = False) -> Iterator[Path]:
    """Build a directory in a temporary sibling and put it in place whole on success (module doc).

    On any exception the temporary directory is removed and ``path`` is left
    exactly as it was. With ``overwrite`` an existing ``path`` is replaced
    only after the new one is complete. With ``carry`` every file of the old
    ``path`` that its writer did not write (its marker's file list) and the new
    one does not hold is kept, at every depth, so replacing an output never
    deletes what the writer did not produce.
    """
    target = normal(path)
    with _HELD_LOCK:
        nested = target in _HELD
    if nested:  # our own staging folder, filled in place: the outer swap is the atomic step
        yield target
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    with parent_lock(target):  # a recovery by another process never sees it unlocked
        _recover_locked(target)
        staging, fd = _new_staging(target)
    with _HELD_LOCK:
        _HELD.add(staging)
    try:
        yield staging
        with parent_lock(target):
            if os.path.lexists(target) and not overwrite:
                raise FileExistsError(target)
            if carry and target.is_dir() and not target.is_symlink():
                keep_foreign(target, staging, owned_by(target), move=False)
            _swap(target, staging, carry=carry)
    except BaseException:
        if _journal_path(target).exists():  # stopped mid-swap: the staged output is whole, so finish it
            with contextlib.suppress(OSError):
                recover(target)
        else:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        with _HELD_LOCK:
            _HELD.discard(staging)
        os.close(fd)


# -- keeping what a writer did not write ------------------------------------------------------------
