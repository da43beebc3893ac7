"""Files written whole: atomic writes, the fsynced journal, kill points, and writes kept inside their output.

A file is written to a temporary sibling, flushed, fsynced and renamed over
the target, so a crash or a kill never leaves half of it.

**Confinement.** Each output folder a command claims (:mod:`recworld.io.owned`)
is registered here with :func:`confine`. From then on every write this module
makes below it (an atomic file, a journal line, and whatever calls
:func:`confined`: a log file, a SQLite cache) refuses a path that passes
through a symbolic link inside the folder, so no write follows a link out of
the folder it belongs to. A link *above* the folder (``/tmp`` on some systems)
is the user's choice and is left alone.

**Temporaries.** A temporary file's name carries a seal
(:func:`recworld.io.proof.temporary_name`), and :func:`sweep_temporary` removes
only sealed names whose writer is gone: a user's ``drafts/.x.20240101.tmp``
is never taken for one, at any depth.

**Write errors.** An ``OSError`` while making or writing an output (a
read-only folder, a full disk, ``ulimit -f``, a name over 255 bytes) is one
:class:`DataError` naming the path and the system's reason (:func:`writing`);
the old output is untouched, since nothing is renamed over it before the new
one is whole.

**Kill points.** :func:`fault_point` names each step between which a kill
could land (a temporary file written, renamed, a swap journaled, ...); it does
nothing unless a hook is installed (:func:`fault_hook`), which is how the tests
kill a command at every one of them (``KILL_POINTS``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from recworld.capped import LINE_LIMIT, open_fd
from recworld.errors import ConfigError, DataError
from recworld.io.jsonl import dumps_canonical, parse_json
from recworld.io.proof import proven_temporary, temporary_name

__all__ = [
    "KILL_POINTS",
    "Journal",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_jsonl",
    "atomic_write_text",
    "atomic_writer",
    "confine",
    "confined",
    "default_mode",
    "fault_hook",
    "fault_point",
    "fsync_dir",
    "is_temporary",
    "normal",
    "open_append",
    "sweep_temporary",
    "write_error",
    "writing",
]

# Every step a kill can fall between, in the order a replaced output passes them.
KILL_POINTS = (
    "file.staged",  # a temporary file is written and fsynced, not yet renamed over its target
    "file.replaced",  # ... renamed over it
    "claim.recorded",  # an in-place output's claim is on disk, nothing else yet
    "marker.written",  # an output's marker is on disk (its files are all written before)
    "swap.journaled",  # a folder swap is journaled, nothing renamed yet
    "swap.old-moved",  # the old folder is renamed aside (two-rename swap only)
    "swap.placed",  # the new folder is in place; the old one is aside
    "swap.swept",  # what the old one held and the new one lacks is carried over
)

FaultHook = Callable[[str, Path], None]
_HOOKS: list[FaultHook] = []
_ROOTS: set[Path] = set()
_LOCK = threading.Lock()


def fault_point(name: str, path: Path) -> None:
    """A step a kill could fall after; runs the installed hooks (none outside the tests)."""
    for hook in tuple(_HOOKS):
        hook(name, path)


@contextlib.contextmanager
def fault_hook(hook: FaultHook) -> Iterator[None]:
    """Call ``hook(point, path)`` at every :func:`fault_point` while the block runs."""
    _HOOKS.append(hook)
    try:
        yield
    finally:
        _HOOKS.remove(hook)


def normal(path: str | Path) -> Path:
    """``path`` made absolute with ``.`` and ``..`` folded, without resolving links."""
    return Path(os.path.normpath(Path(path).expanduser().absolute()))


def confine(root: str | Path) -> None:
    """Register ``root`` as an output of this process: writes below it never pass through a link."""
    with _LOCK:
        _ROOTS.add(normal(root))
        with contextlib.suppress(OSError):
            _ROOTS.add(Path(root).resolve())


def confined(path: str | Path, *, final: bool = True) -> Path:
    """``path``, after checking that no part of it below a claimed output is a symbolic link.

    ``final`` checks the last component too (an open or append would follow it);
    an atomic replace does not follow it, so it checks the folders only.
    """
    target = normal(path)
    with _LOCK:
        roots = [r for r in _ROOTS if target != r and target.is_relative_to(r)]
    for root in roots:
        parts = target.relative_to(root).parts
        current = root
        for part in parts if final else parts[:-1]:
            current = current / part
            if current.is_symlink():
                raise ConfigError(
                    f"{current}: is a symbolic link inside the output folder {root}; "
                    "recworld never writes through a link (remove it)"
                )
    return target


def fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def default_mode(base: int) -> int:
    """``base`` less the process umask: the mode a plain ``open``/``mkdir`` would give."""
    umask = os.umask(0)
    os.umask(umask)
    return base & ~umask


def write_error(exc: OSError, path: str | Path) -> DataError:
    """``exc``, raised while writing an output at ``path``, as one line naming the file and the reason."""
    named = exc.filename2 or exc.filename  # a rename's target, not its temporary source
    where = named if isinstance(named, str) and named else str(path)
    reason = exc.strerror or str(exc)
    hint = {
        errno.ENAMETOOLONG: " (a file name is over 255 bytes: choose a shorter one)",
        errno.ENOSPC: " (the disk is full: free some space and rerun; nothing finished was lost)",
        errno.EDQUOT: " (over the disk quota: free some space and rerun; nothing finished was lost)",
        errno.EFBIG: " (over the file size limit, ulimit -f: raise it and rerun)",
        errno.EROFS: " (a read-only file system: choose another folder)",
        errno.EACCES: " (no permission to write there: choose another folder)",
        errno.EPERM: " (no permission to write there: choose another folder)",
    }.get(exc.errno or 0, "")
    return DataError(f"cannot write: {reason}{hint}", path=where)


@contextlib.contextmanager
def writing(path: str | Path) -> Iterator[None]:
    """Turn an ``OSError`` raised in the block (writing an output at ``path``) into :func:`write_error`."""
    try:
        yield
    except OSError as exc:
        raise write_error(exc, path) from None


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename: :func:`atomic_writer`)."""
    with atomic_writer(path) as handle:
        handle.write(data)


@contextlib.contextmanager
def atomic_writer(path: str | Path) -> Iterator[BinaryIO]:
    """A handle on a temporary sibling of ``path``, renamed over it when the block ends without error.

    It is fsynced before the rename; an exception in the block removes it and
    leaves ``path`` as it was: ``path`` holds its old bytes or all the new ones.
    The temporary is ``flock``ed until renamed (so :func:`sweep_temporary` tells
    one a kill left from one being written) and sealed (``proof.temporary_name``).
    """
    target = confined(path, final=False)
    with writing(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / temporary_name(target.parent, target.name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                os.fchmod(handle.fileno(), default_mode(0o666))  # created private, as mkstemp does
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
                fault_point("file.staged", target)
                os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
    fsync_dir(target.parent)
    fault_point("file.replaced", target)


def is_temporary(path: Path, of: str = "") -> bool:
    """Whether ``path`` is a temporary :func:`atomic_writer` made (for ``of``): its seal, never its form."""
    return proven_temporary(path, of)


def sweep_temporary(folder: Path, *, prefix: str = "", deep: bool = True) -> None:
    """Remove the temporary files of atomic writes a kill left in ``folder`` (below it with ``deep``).

    Only sealed names :func:`atomic_writer` made (for a file named
    ``prefix``, if given) whose writer is gone (no ``flock`` held) are removed.
    A walk never follows a link.
    """
    if not folder.is_dir() or folder.is_symlink():
        return
    walk = os.walk(folder) if deep else [(str(folder), [], os.listdir(folder))]
    for root, _dirs, names in walk:
        for name in names:
            path = Path(root) / name
            if name.endswith(".tmp") and is_temporary(path, prefix):
                _remove_if_dead(path)


def _remove_if_dead(path: Path) -> None:
    try:
        fd = open_fd(path, follow=False)
    except (OSError, DataError):
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return  # a live writer holds it
    finally:
        os.close(fd)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any, *, indent: int | None = 2) -> None:
    """Write ``obj`` as strict JSON (sorted keys, trailing newline) atomically; NaN or Infinity raise."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=indent, allow_nan=False)
    atomic_write_text(path, text + "\n")


def atomic_write_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write one canonical JSON object per line atomically; returns the row count."""
    lines = [dumps_canonical(row) for row in rows]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)


def _open_no_follow(path: Path, flags: int) -> int:
    """A journal's descriptor: a regular file, never a link, FIFO or device (``capped.open_fd``)."""
    try:
        return open_fd(path, flags, follow=False, mode=default_mode(0o666))
    except DataError as exc:
        if path.is_symlink():
            raise ConfigError(f"{path}: is a symbolic link; recworld never writes through a link") from None
        raise exc from None


def open_append(path: str | Path) -> int:
    """A descriptor appending to ``path`` (created): confined, never a link, a FIFO or a device.

    What a log file opens with: ``logging.FileHandler`` on a FIFO named
    ``recworld.log`` blocked forever. An ``OSError`` is one line (:func:`writing`).
    """
    target = confined(path)
    with writing(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        return _open_no_follow(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT)


class Journal:
    """An append-only, fsynced JSON-lines journal: what makes long work resumable.

    Each record is one line, handed to the kernel (written and flushed) before
    the next, so a ``kill -9`` of the process loses at most the line being
    written. Lines are fsynced in groups (group commit): after ``batch`` lines
    or ``batch_s`` seconds since the last fsync, whichever comes first, and on
    :meth:`sync` and :meth:`close`, so a crash of the machine itself loses at
    most the group not yet fsynced, which a resume asks again. The defaults
    (``batch=1``) fsync every line. On load a torn last line
    (no trailing newline) is dropped and cut from the file; an unreadable line
    anywhere else, or one over :data:`recworld.capped.LINE_LIMIT`, is
    corruption and raises :class:`DataError` naming ``file:line`` (read a line
    at a time, so memory stays bounded). Records are keyed by the field
    ``key``; a later line for the same key replaces an earlier one.

    Several processes may write one journal (two ``recworld eval`` on one run):
    every append and every load holds an exclusive ``flock`` on the file, so a
    reader never sees, or cuts, a line another process is writing. The journal
    never follows a symbolic link, and is a regular file or refused.
    """

    def __init__(self, path: Path, key: str, *, batch: int = 1, batch_s: float = 0.0) -> None:
        if batch < 1 or batch_s < 0:
            raise ValueError("a journal fsyncs after batch >= 1 lines or batch_s >= 0 seconds")
        self.path = Path(path)
        self.key = key
        self.batch = batch
        self.batch_s = batch_s
        self._handle: BinaryIO | None = None
        self._unsynced = 0  # lines written since the last fsync
        self._synced_at = time.monotonic()

    def load(self) -> dict[str, dict[str, Any]]:
        """Read every whole record, repairing a line torn by a kill."""
        if not os.path.lexists(self.path):
            return {}
        fd = _open_no_follow(confined(self.path), os.O_RDWR)
        with os.fdopen(fd, "r+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            records, good_end = self._parse(handle)
            if good_end != os.fstat(handle.fileno()).st_size:
                with writing(self.path):
                    handle.truncate(good_end)
                    handle.flush()
                    os.fsync(handle.fileno())
        return records

    def _parse(self, handle: BinaryIO, limit: int = LINE_LIMIT) -> tuple[dict[str, dict[str, Any]], int]:
        records: dict[str, dict[str, Any]] = {}
        good_end = number = 0
        while raw := handle.readline(limit + 1):
            number += 1
            if not raw.endswith(b"\n"):
                if len(raw) > limit:
                    raise DataError(
                        f"line larger than {limit} bytes; refusing to read it", path=self.path, line=number
                    )
                break  # the piece after the final newline: a line torn by a kill
            record = parse_json(raw, path=self.path, line=number)  # NaN, surrogates, depth: one error
            try:
                records[str(record[self.key])] = record
            except (KeyError, TypeError, ValueError) as exc:
                # A line with its newline was written whole, so garbage here is corruption.
                raise DataError(f"unreadable journal line ({exc})", path=self.path, line=number) from exc
            good_end += len(raw)
        return records, good_end

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one record to the kernel; fsync when its group is full or old enough (see the class)."""
        line = (dumps_canonical(record) + "\n").encode("utf-8")
        with writing(self.path):
            if self._handle is None:
                target = confined(self.path)
                target.parent.mkdir(parents=True, exist_ok=True)
                fd = _open_no_follow(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
                self._handle = os.fdopen(fd, "ab")
                self._synced_at = time.monotonic()
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX)
            try:
                self._handle.write(line)
                self._handle.flush()
                self._unsynced += 1
                if self._unsynced >= self.batch or time.monotonic() - self._synced_at >= self.batch_s:
                    self._fsync()
            finally:
                fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)

    def _fsync(self) -> None:
        if self._handle is not None and self._unsynced:
            os.fsync(self._handle.fileno())
        self._unsynced = 0
        self._synced_at = time.monotonic()

    def sync(self) -> None:
        """Fsync every line written so far (the end of a run, an interrupt)."""
        self._fsync()

    def close(self) -> None:
        """Fsync what is not yet, and close."""
        if self._handle is not None:
            self._fsync()
            self._handle.close()
            self._handle = None
