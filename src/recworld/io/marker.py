"""What says a folder is recworld's: the output marker (after success) and the claim (while in progress).

``.recworld-output.json`` (:class:`OutputMarker`) is written into a folder only
after the command that writes it has succeeded: the kinds of output the folder
holds (``lrworld-suite``, ``eval-run``, ``report``, ...) and, for an output that
is built whole and swapped in, the files it wrote with the size and SHA-256 of
each, so a rebuild can tell its own stale files from a user's. A marker is read
back as untrusted input: a file counts as the writer's only while its bytes
still match (:func:`recworld.io.carry.owned_by`), so a forged list or a file
the user rewrote is kept. A marker of
the first version (``recworld.output/1``, one ``kind``, no file list) is read as
that one kind.

``.recworld-claim.json`` (:class:`OutputClaim`) is written by a command that
fills a folder in place (a run, a report) when it takes a new or empty folder,
before its first file: it lets a rerun of the same command resume after a kill,
and it is no marker. No other command takes the folder on its strength.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recworld.errors import DataError
from recworld.io.files import atomic_write_json
from recworld.io.jsonl import read_json_object

__all__ = [
    "CLAIM_FILE",
    "OUTPUT_MARKER",
    "OUTPUT_SCHEMA",
    "OutputClaim",
    "OutputMarker",
    "claimed_kinds",
    "output_kind",
    "output_kinds",
    "read_marker",
    "write_claim",
]

OUTPUT_MARKER = ".recworld-output.json"
CLAIM_FILE = ".recworld-claim.json"
OUTPUT_SCHEMA: Literal["recworld.output/2"] = "recworld.output/2"
MARKER_LIMIT = 32 << 20  # a marker listing every file of a suite; a planted one of gigabytes is no marker


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class OutputMarker(_Strict):
    """Written into every folder a command owns, after it succeeded: what lets a rerun replace it."""

    schema_id: Literal["recworld.output/2"] = Field(default=OUTPUT_SCHEMA, alias="schema")
    kinds: tuple[str, ...] = Field(min_length=1)
    created_by: str = ""
    # Files (relative POSIX paths) a swapped-in output wrote; None for one filled in place.
    files: tuple[str, ...] | None = None
    # For each listed file, (size, SHA-256) as it was written: what proves a file still the writer's.
    digests: dict[str, tuple[int, str]] | None = None

    def to_json(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class _MarkerV1(_Strict):
    schema_id: Literal["recworld.output/1"] = Field(alias="schema")
    kind: str = Field(min_length=1)
    created_by: str = ""


class OutputClaim(_Strict):
    """A folder an in-place command took while new or empty, and has not finished writing."""

    schema_id: Literal["recworld.claim/1"] = Field(default="recworld.claim/1", alias="schema")
    kinds: tuple[str, ...] = Field(min_length=1)


def read_marker(folder: Path) -> OutputMarker | None:
    """The marker in ``folder``; None when there is none, or it is not a marker (a folder is not ours)."""
    path = folder / OUTPUT_MARKER
    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = read_json_object(path, limit=MARKER_LIMIT)
    except DataError:
        return None
    try:
        return OutputMarker.model_validate(data)
    except ValidationError:
        pass
    try:
        old = _MarkerV1.model_validate(data)
    except ValidationError:
        return None
    return OutputMarker(kinds=(old.kind,), created_by=old.created_by)


def output_kinds(folder: str | Path) -> frozenset[str]:
    """The kinds of output ``folder``'s marker names (empty without a valid marker)."""
    marker = read_marker(Path(folder))
    return frozenset(marker.kinds) if marker is not None else frozenset()


def output_kind(folder: str | Path) -> str | None:
    """The first kind ``folder``'s marker names; None without a valid marker."""
    marker = read_marker(Path(folder))
    return marker.kinds[0] if marker is not None else None


def claimed_kinds(folder: Path) -> frozenset[str]:
    """The kinds an unfinished in-place command claimed ``folder`` for."""
    path = folder / CLAIM_FILE
    if not path.is_file() or path.is_symlink():
        return frozenset()
    try:
        return frozenset(OutputClaim.model_validate(read_json_object(path, limit=MARKER_LIMIT)).kinds)
    except (DataError, ValidationError):
        return frozenset()


def write_claim(folder: Path, kinds: frozenset[str]) -> None:
    """Record ``kinds`` as claimed in ``folder`` (the file goes when none is left)."""
    path = folder / CLAIM_FILE
    if kinds:
        claim = OutputClaim(kinds=tuple(sorted(kinds)))
        atomic_write_json(path, claim.model_dump(mode="json", by_alias=True))
    elif path.is_file():
        path.unlink()
