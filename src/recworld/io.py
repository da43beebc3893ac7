"""Atomic file output: a crash or a kill never leaves a half-written file.

Files are written to a temporary sibling, flushed, fsynced and renamed over
the target. Directories are built in a temporary sibling and renamed into
place as a whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recworld.capped import RECORD_LIMIT, iter_lines, open_regular, read_capped
from recworld.errors import ConfigError, DataError, from_validation

ModelT = TypeVar("ModelT", bound=BaseModel)
# Deeper JSON than this is not a record anyone wrote by hand or by tool; refuse it early
# (Python's json module would otherwise raise RecursionError near 1000 levels).
MAX_JSON_DEPTH = 64


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _default_mode(base: int) -> int:
    """``base`` less the process umask: the mode a plain ``open``/``mkdir`` would give."""
    umask = os.umask(0)
    os.umask(umask)
    return base & ~umask


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file, fsync, rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, _default_mode(0o666))  # mkstemp makes it private
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def dumps_canonical(obj: Any) -> str:
    """JSON with sorted keys and no spaces: stable bytes for hashing and diffing."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def read_json_object(path: str | Path, *, missing: str = "missing file") -> dict[str, Any]:
    """Read a JSON object, or raise :class:`DataError` naming the file (and line) that is wrong."""
    source = Path(path)
    data = parse_json(read_capped(source, limit=RECORD_LIMIT, missing=missing), path=source)
    if not isinstance(data, dict):
        raise DataError("expected a JSON object", path=source)
    return data


def _depth_ok(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """A cheap upper bound on nesting: brackets outside strings never exceed ``limit`` deep."""
    if text.count("[") + text.count("{") <= limit:
        return True
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def parse_json(text: str | bytes, *, path: str | Path | None = None, line: int | None = None) -> Any:
    """``json.loads`` that turns every malformed input into one :class:`DataError`.

    Covers syntax errors, bad UTF-8, nesting deeper than :data:`MAX_JSON_DEPTH`,
    and the non-standard constants ``NaN``/``Infinity``, which no record of ours holds.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DataError(f"not UTF-8 (byte {exc.start})", path=path, line=line) from None
    if not _depth_ok(text):
        raise DataError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", path=path, line=line)

    def _constant(name: str) -> Any:
        raise DataError(f"non-standard JSON constant {name}", path=path, line=line)

    try:
        return json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise DataError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=at) from None
    except (ValueError, RecursionError) as exc:  # an integer of more than 4300 digits, say
        raise DataError(f"invalid JSON: {exc}", path=path, line=line) from None


def iter_json_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON-lines file.

    The one JSON-lines reader of the package: a missing file, a device or FIFO, a
    line over :data:`recworld.capped.LINE_LIMIT`, bad UTF-8, bad JSON, excessive
    nesting or a line that is not an object raises :class:`DataError` naming
    ``file:line``. A UTF-8 byte-order mark at the start is skipped.
    """
    source = Path(path)
    with open_regular(source) as handle:
        for number, raw in iter_lines(handle, source):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            record = parse_json(raw, path=source, line=number)
            if not isinstance(record, dict):
                raise DataError("expected a JSON object", path=source, line=number)
            yield number, record


def read_models(path: str | Path, model: type[ModelT]) -> list[ModelT]:
    """Every line of a JSON-lines file validated as ``model``; errors name ``file:line`` and the field."""
    out: list[ModelT] = []
    for number, record in iter_json_lines(path):
        try:
            out.append(model.model_validate(record))
        except ValidationError as exc:
            raise from_validation(exc, path=path, line=number) from None
    return out


def atomic_write_json(path: str | Path, obj: Any, *, indent: int | None = 2) -> None:
    """Write ``obj`` as JSON (sorted keys, trailing newline) atomically."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=indent)
    atomic_write_text(path, text + "\n")


def atomic_write_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write one canonical JSON object per line atomically; returns the row count."""
    lines = [dumps_canonical(row) for row in rows]
    atomic_write_text(path, "".join(line + "\n" for line in lines))
    return len(lines)


@contextlib.contextmanager
def atomic_directory(path: str | Path, *, overwrite: bool = True, carry: bool = False) -> Iterator[Path]:
    """Build a directory in a temporary sibling and rename it into place on success.

    On any exception the temporary directory is removed and ``path`` is left
    exactly as it was. With ``overwrite`` an existing ``path`` is replaced
    only after the new one is complete. With ``carry`` every entry of the old
    ``path`` that the new one does not hold is carried over (hard links where
    the file system allows), so replacing an output never deletes files the
    writer did not produce.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    staging.chmod(_default_mode(0o777))  # mkdtemp makes it private
    try:
        yield staging
        if carry and target.is_dir():
            _carry_entries(target, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():
        if not overwrite:
            shutil.rmtree(staging, ignore_errors=True)
            raise FileExistsError(target)
        trash = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, trash)
        os.replace(staging, target)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(staging, target)
    _fsync_dir(target.parent)


def _link_or_copy(source: str, destination: str) -> str:
    """A hard link (instant, byte-identical, no extra space), or a copy where links are refused."""
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)
    return destination


def _carry_entries(old: Path, staging: Path) -> None:
    """Copy into ``staging`` each entry of ``old`` it lacks; ``old`` stays whole until the swap."""
    for entry in sorted(old.iterdir()):
        destination = staging / entry.name
        if destination.exists() or destination.is_symlink():
            continue
        if entry.is_symlink():
            os.symlink(os.readlink(entry), destination)
        elif entry.is_dir():
            shutil.copytree(entry, destination, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(str(entry), str(destination))


# -- outputs a command may replace -----------------------------------------------------------------

OUTPUT_MARKER = ".recworld-output.json"
OUTPUT_SCHEMA: Literal["recworld.output/1"] = "recworld.output/1"


class OutputMarker(BaseModel):
    """Written into every directory a command owns: what lets a rerun replace it and nothing else."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_id: Literal["recworld.output/1"] = Field(default=OUTPUT_SCHEMA, alias="schema")
    kind: str = Field(min_length=1)
    created_by: str = ""


def output_kind(path: str | Path) -> str | None:
    """The kind named by the marker inside ``path``; None when there is no valid marker."""
    marker = Path(path) / OUTPUT_MARKER
    if not marker.is_file():
        return None
    try:
        return OutputMarker.model_validate(read_json_object(marker)).kind
    except (DataError, ValidationError):
        return None


def claim_output_dir(
    path: str | Path,
    kind: str,
    *,
    force: bool = False,
    recognise: Callable[[Path], bool] | None = None,
) -> Path:
    """Check that a command may write its ``kind`` of output at ``path``, else raise :class:`ConfigError`.

    Allowed: a new path, an empty directory, or a directory whose marker names
    the same ``kind`` (``recognise`` may accept outputs of older versions that
    had no marker). Anything else needs ``force``. A file or a symbolic link is
    always refused: replacing it would lose what it points to.
    """
    target = Path(path)
    if target.is_symlink():
        raise ConfigError(f"{target}: is a symbolic link; give the real directory as --out")
    if not target.exists():
        return target
    if not target.is_dir():
        raise ConfigError(f"{target}: exists and is not a directory; choose another --out")
    if not any(target.iterdir()):
        return target
    found = output_kind(target)
    if found == kind or (found is None and recognise is not None and recognise(target)) or force:
        return target
    what = f"holds a {found!r} output" if found else "is not empty and was not written by recworld"
    raise ConfigError(
        f"{target}: {what}; refusing to write a {kind!r} output there "
        "(choose a new --out, or pass --force: files it does not write are kept)"
    )


def mark_output_dir(path: str | Path, kind: str) -> None:
    """Write the ``kind`` marker into ``path`` (created if needed), for commands that fill a folder in place.

    Resumable outputs (a LUNAR run, a report folder) are written file by file, not
    swapped in whole; claim the folder with :func:`claim_output_dir` first, then
    mark it so a rerun recognises it.
    """
    from recworld import __version__

    target = Path(path)
    target.mkdir(parents=True, exist_ok=True)
    if output_kind(target) != kind:
        marker = OutputMarker(kind=kind, created_by=f"recworld {__version__}")
        atomic_write_json(target / OUTPUT_MARKER, marker.model_dump(mode="json", by_alias=True))


@contextlib.contextmanager
def output_directory(
    path: str | Path,
    kind: str,
    *,
    force: bool = False,
    recognise: Callable[[Path], bool] | None = None,
) -> Iterator[Path]:
    """:func:`claim_output_dir`, then build the output atomically, marked, keeping foreign entries.

    The new output replaces the old one only when complete; entries of the old
    directory that the new one does not write (``runs/`` beside a suite, a
    user's notes) are carried over, so no command deletes what it did not create.
    """
    from recworld import __version__

    target = claim_output_dir(path, kind, force=force, recognise=recognise)
    with atomic_directory(target, carry=True) as staging:
        yield staging
        marker = OutputMarker(kind=kind, created_by=f"recworld {__version__}")
        atomic_write_json(staging / OUTPUT_MARKER, marker.model_dump(mode="json", by_alias=True))


class Journal:
    """An append-only, fsynced JSON-lines journal: what makes long work resumable.

    Each record is one line, written and fsynced before the next, so a
    ``kill -9`` loses at most the line being written. On load a torn last line
    (no trailing newline) is dropped and cut from the file; an unreadable line
    anywhere else is corruption and raises :class:`DataError` naming
    ``file:line``. Records are keyed by the field ``key``; a later line for the
    same key replaces an earlier one.
    """

    def __init__(self, path: Path, key: str) -> None:
        self.path = Path(path)
        self.key = key
        self._handle: BinaryIO | None = None

    def load(self) -> dict[str, dict[str, Any]]:
        """Read every whole record, repairing a line torn by a kill."""
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        records: dict[str, dict[str, Any]] = {}
        good_end = 0
        # The piece after the final newline is empty, or a line torn by a kill: skip it.
        for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
            try:
                record = json.loads(raw)
                records[str(record[self.key])] = record
            except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as exc:
                # A line with its newline was written whole, so garbage here is corruption.
                raise DataError(f"unreadable journal line ({exc})", path=self.path, line=number) from exc
            good_end += len(raw) + 1
        if good_end != len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
                handle.flush()
                os.fsync(handle.fileno())
        return records

    def append(self, record: Mapping[str, Any]) -> None:
        """Write one record and fsync it before returning."""
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("ab")
        self._handle.write((dumps_canonical(record) + "\n").encode("utf-8"))
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
