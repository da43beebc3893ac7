"""Folder swaps that no kill can lose: build beside, journal, exchange, carry, recover on the next run.

:func:`atomic_directory` builds a folder in a hidden sibling and puts it in
place only when it is whole:

1. the staging folder is made and sealed: its name (``.NAME.<nonce><seal>.partial``)
   carries a MAC, under this user's key, of the output's real path, a random
   nonce and the folder's own inode (:mod:`recworld.io.proof`);
2. the swap is journaled (``.NAME.swap.json`` beside it: the staging and trash
   names, the inodes of the new and the old folder, sealed as a whole);
3. the two folders are exchanged in one step (``renameat2(RENAME_EXCHANGE)``,
   Linux) where the file system allows, otherwise the old one is renamed aside
   (``.NAME.old-<nonce><seal>``, sealed for its inode) and the new one into place;
4. with ``carry``, what the old folder held and the new one lacks is kept
   (:func:`keep_foreign`): hard-linked in before the swap, and anything that
   arrived since moved over after it;
5. the old folder is removed, then the journal.

Every entry point first calls :func:`recover`, under an ``flock`` of the parent
folder: a journaled swap that a kill interrupted is finished, a sealed trash
folder left without a journal gives back what it holds, and a sealed staging
folder whose builder is dead is removed. A live builder holds an ``flock`` on
its staging folder, which is how :func:`recover` tells it from a dead one.

**Invariant.** Recovery moves or deletes only direct children of the output's
parent that :mod:`recworld.io.proof` proves are this output's own (the exact
generated name, sealed for the inode that bears it), and only what a journal
whose seal verifies names. A journal that fails any check (planted, edited,
copied from another folder, written by another user, a FIFO, too large) is
ignored and reported in one warning line; no deletion ever follows a name read
from disk, so a user's ``.suite.old-v1/`` or a forged ``"trash": ".."`` is left
alone.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import hmac
import logging
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recworld.capped import read_capped
from recworld.errors import DataError
from recworld.io.carry import keep_foreign, owned_by
from recworld.io.files import (
    atomic_write_json,
    default_mode,
    fault_point,
    fsync_dir,
    normal,
    sweep_temporary,
    writing,
)
from recworld.io.jsonl import dumps_canonical, parse_json
from recworld.io.proof import hidden, identity, new_nonce, real_target, seal, short_name

__all__ = [
    "USE_EXCHANGE",
    "atomic_directory",
    "parent_lock",
    "recover",
]

_log = logging.getLogger("recworld.io")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_JOURNAL_LIMIT = 64 << 10
_HELD: set[Path] = set()  # staging folders this process is building (nested swaps skip them)
_HELD_LOCK = threading.Lock()
USE_EXCHANGE = True  # the tests turn it off to run the two-rename path


class _SwapRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_id: Literal["recworld.swap/2"] = Field(default="recworld.swap/2", alias="schema")
    staging: str
    trash: str  # "" when there was no old folder
    new: tuple[int, int]  # (st_dev, st_ino) of the staged folder: renames keep it
    old: tuple[int, int] | None  # the same of the folder it replaces
    carry: bool
    seal: str = ""

    def body(self, target: Path) -> str:
        fields = self.model_dump(mode="json", by_alias=True, exclude={"seal"})
        return seal("journal", real_target(target), dumps_canonical(fields))


def _journal_path(target: Path) -> Path:
    return target.with_name(f".{short_name(target.name)}.swap.json")


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
    """A fresh sealed staging folder beside ``target``, and the descriptor holding its ``flock``.

    Made under a plain name, locked, then renamed to the name sealed for its
    inode (a rename keeps the inode). Called under :func:`parent_lock`, so no
    concurrent :func:`recover` sees it unlocked.
    """
    made = target.with_name(f".{short_name(target.name)}.{new_nonce()}.new")
    os.mkdir(made, 0o700)
    try:
        fd = os.open(made, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except BaseException:
        os.rmdir(made)
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # alive while held: recover() leaves it be
        info = os.fstat(fd)
        staging = target.with_name(hidden(target, "staging").name(new_nonce(), (info.st_dev, info.st_ino)))
        os.rename(made, staging)
        os.fchmod(fd, default_mode(0o777))
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.rmdir(made)
        raise
    return staging, fd


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
    """Finish or undo what a killed swap of ``target`` left; clean its dead staging folders (module doc)."""
    target = normal(target)
    if not target.parent.is_dir():
        return
    with parent_lock(target):
        _recover_locked(target)


def _recover_locked(target: Path) -> None:
    journal = _journal_path(target)
    if os.path.lexists(journal):
        record = _read_journal(target, journal)
        if record is not None:
            _finish(target, journal, record)
    staging_form, trash_form = hidden(target, "staging"), hidden(target, "trash")
    for path in sorted(target.parent.iterdir(), key=lambda p: p.name):
        if trash_form.matches(path.name) and trash_form.proves(path):
            if not os.path.lexists(target):  # a kill between two renames: the last whole output returns
                os.replace(path, target)
                continue
            keep_foreign(path, target, owned_by(path), move=True)
            shutil.rmtree(path, ignore_errors=True)
        elif staging_form.matches(path.name) and staging_form.proves(path) and not _alive(path):
            shutil.rmtree(path, ignore_errors=True)
    sweep_temporary(target.parent, prefix=journal.name, deep=False)
    fsync_dir(target.parent)


def _read_journal(target: Path, journal: Path) -> _SwapRecord | None:
    """The journal's record if every check passes; otherwise None, and one warning line."""
    record, why = _checked(target, journal)
    if record is None:
        _ignored(journal, why)
    return record


def _checked(target: Path, journal: Path) -> tuple[_SwapRecord | None, str]:
    try:
        data = parse_json(read_capped(journal, limit=_JOURNAL_LIMIT, follow=False), path=journal)
        record = _SwapRecord.model_validate(data)
    except (DataError, ValidationError):
        return None, "not a swap journal recworld writes"
    if not hmac.compare_digest(record.seal, record.body(target)):
        return None, "its seal does not match: written by someone else, or elsewhere"
    names_ok = hidden(target, "staging").name(_nonce(record.staging), record.new) == record.staging
    if record.old is not None:
        names_ok = names_ok and hidden(target, "trash").name(_nonce(record.trash), record.old) == record.trash
    if not names_ok or (record.old is None and record.trash):
        return None, "it names folders recworld did not make for this output"
    return record, ""


def _nonce(name: str) -> str:
    """The nonce part of a generated name (what :meth:`Hidden.name` rebuilds it from)."""
    stem = name.removesuffix(".partial")
    return stem.rsplit(".", 1)[-1].removeprefix("old-")[:8]


_WARNED: set[Path] = set()


def _ignored(journal: Path, why: str) -> None:
    if journal not in _WARNED:  # once per process: every command recovers more than once
        _WARNED.add(journal)
        _log.warning("%s: ignored (%s); nothing it names was touched", journal, why)


def _finish(target: Path, journal: Path, record: _SwapRecord) -> None:
    staging = target.parent / record.staging
    trash = target.parent / record.trash if record.trash else None
    new, old = tuple(record.new), tuple(record.old) if record.old is not None else None
    if identity(staging) == new and identity(target) in (old, None):  # not placed yet: finish the swap
        _place(target, staging, trash)
    elif old is not None and trash is not None and identity(target) is None and identity(trash) == old:
        os.replace(trash, target)  # the new folder is gone: the old one comes back
    for path in (staging, trash):
        if path is not None and old is not None and identity(path) == old:  # the old folder, aside
            if record.carry and identity(target) == new:
                keep_foreign(path, target, owned_by(path), move=True)
            shutil.rmtree(path, ignore_errors=True)
    journal.unlink()


def _place(target: Path, staging: Path, trash: Path | None) -> None:
    """Put ``staging`` at ``target``; the old folder ends at ``staging`` (exchanged) or ``trash``."""
    if not os.path.lexists(target):
        os.replace(staging, target)
    elif not _exchange(staging, target):
        assert trash is not None
        os.replace(target, trash)
        fault_point("swap.old-moved", target)
        os.replace(staging, target)
    fault_point("swap.placed", target)


def _swap(target: Path, staging: Path, *, carry: bool) -> None:
    new, old = identity(staging), identity(target)
    assert new is not None
    trash = target.with_name(hidden(target, "trash").name(new_nonce(), old)) if old is not None else None
    record = _SwapRecord(
        staging=staging.name, trash=trash.name if trash else "", new=new, old=old, carry=carry
    )
    record = record.model_copy(update={"seal": record.body(target)})
    journal = _journal_path(target)
    if os.path.lexists(journal):  # recovery left it: not ours, and not ours to replace
        raise DataError(
            "a file recworld did not write sits where it journals this swap; move it away and rerun "
            "(nothing was changed)",
            path=journal,
        )
    atomic_write_json(journal, record.model_dump(mode="json", by_alias=True))
    fault_point("swap.journaled", target)
    _place(target, staging, trash)
    for path in (staging, trash):
        if path is not None and old is not None and identity(path) == old:
            if carry:
                keep_foreign(path, target, owned_by(path), move=True)
                fault_point("swap.swept", target)
            shutil.rmtree(path, ignore_errors=True)
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
    with writing(target.parent):
        target.parent.mkdir(parents=True, exist_ok=True)
        with parent_lock(target):  # a recovery by another process never sees it unlocked
            _recover_locked(target)
            staging, fd = _new_staging(target)
    made = identity(staging)
    with _HELD_LOCK:
        _HELD.add(staging)
    try:
        yield staging
        if os.path.lexists(target) and not overwrite:
            raise DataError("exists already; not replacing it", path=target)
        with parent_lock(target), writing(target):
            if carry and target.is_dir() and not target.is_symlink():
                keep_foreign(target, staging, owned_by(target), move=False)
            _swap(target, staging, carry=carry)
    except BaseException:
        if identity(staging) == made:  # never placed (after an exchange the old folder is there)
            shutil.rmtree(staging, ignore_errors=True)
        with contextlib.suppress(OSError, DataError):
            recover(target)  # stopped mid-swap: the staged output is whole, so the journal finishes it
        raise
    finally:
        with _HELD_LOCK:
            _HELD.discard(staging)
        os.close(fd)
