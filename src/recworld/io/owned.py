"""The one ownership rule every command that writes a folder follows.

A command may write its kind of output (``lrworld-suite``, ``eval-run``,
``report``, ``lunar-run``, ...) into a folder that is

* new, or empty;
* or carries recworld's marker for that kind (:mod:`recworld.io.marker`), or a
  claim for it left by an unfinished run of the same command (which a rerun resumes);
* or carries the marker of a kind the command declares it ``joins`` (a report
  beside the run it reports on, agreement tables in a LUNAR run);

and nothing else, unless ``--force``: then the command writes its own files there
and keeps everything else, at every depth: only a temporary file it can prove
its own (:mod:`recworld.io.proof`) is ever swept. No folder is ever recognised
by the names of the files in it. A symbolic link is never an output folder, no
write follows a link out of the folder (:func:`recworld.io.files.confine`), and
a folder inside another recworld output (a run in ``SUITE/runs/``) is never
reached through a link below that output (a crafted suite's ``runs`` pointing
outside it). The marker is written only after the command succeeded.

**Names.** An output path is valid UTF-8 text (it is written into records) and
no component of it is over 255 bytes; either is one :class:`ConfigError`
before anything is written. Hidden names recworld makes beside an output are
shortened to fit (:func:`recworld.io.proof.short_name`).

Two ways to fill a folder, with one rule:

* :func:`output_directory`: the output is built whole beside the folder and
  swapped in (:func:`recworld.io.swap.atomic_directory`), its marker listing the
  files it wrote: a suite, a described dataset, an export.
* :func:`claim_output_dir` then :func:`mark_output_dir`: the folder is filled in
  place, file by file (each atomic), and resumed after a kill: a run, a report,
  a LUNAR folder. Writers of one folder serialise through :func:`output_lock`.

Refusals name the options the command really has (``option``, ``force_option``),
so a hint never asks for a flag that does not exist.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Collection, Iterator
from pathlib import Path

from recworld import __version__
from recworld.errors import ConfigError
from recworld.io.carry import digests, listed_files
from recworld.io.files import (
    atomic_write_json,
    confine,
    fault_point,
    is_temporary,
    normal,
    sweep_temporary,
    writing,
)
from recworld.io.marker import (
    CLAIM_FILE,
    OUTPUT_MARKER,
    OutputMarker,
    claimed_kinds,
    read_marker,
    write_claim,
)
from recworld.io.proof import NAME_MAX
from recworld.io.swap import atomic_directory, recover

__all__ = [
    "check_output_dir",
    "claim_output_dir",
    "mark_output_dir",
    "output_directory",
    "output_lock",
    "output_path",
    "require_output",
]


def _created_by() -> str:
    return f"recworld {__version__}"


def _refusal(target: Path, kind: str, why: str, option: str, force_option: str | None) -> ConfigError:
    way = f"choose a new {option}" if option else "choose another folder"
    if force_option:
        way += f", or pass {force_option}: files it does not write are kept"
    return ConfigError(f"{target}: {why}; refusing to write a {kind!r} output there ({way})")


def output_path(path: str | Path, option: str = "--out") -> Path:
    """``path`` absolute (:func:`recworld.io.files.normal`), after the name checks (module doc)."""
    target = normal(path)
    text = str(target)
    shown = ascii(text)[1:-1]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(
            f"{shown}: is not valid UTF-8 text; recworld records output paths as text "
            f"(rename it, or choose another {option or 'folder'})"
        ) from None
    for part in target.parts:
        if len(part.encode("utf-8")) > NAME_MAX:
            raise ConfigError(
                f"{shown}: the name {part[:40]!r}... is {len(part.encode())} bytes, over the "
                f"{NAME_MAX} a file name may have; choose a shorter {option or 'folder'}"
            )
    return target


def _no_link_inside_an_output(target: Path) -> None:
    """Refuse ``target`` when a folder between it and the recworld output above it is a link."""
    links: list[Path] = []
    current = target.parent
    while current != current.parent:
        if current.is_symlink():
            links.append(current)
        if read_marker(current) is not None or claimed_kinds(current):
            if links:
                raise ConfigError(
                    f"{links[-1]}: is a symbolic link inside the recworld output {current}; "
                    "recworld never writes through one (remove it, or give a real folder)"
                )
            return
        current = current.parent


def check_output_dir(
    path: str | Path,
    kind: str,
    *,
    force: bool = False,
    joins: Collection[str] = (),
    option: str = "--out",
    force_option: str | None = "--force",
) -> Path:
    """Check, writing nothing, that ``kind`` may be written at ``path`` (module doc); returns it absolute.

    A swap a kill interrupted there is finished first, so the folder is judged as
    it really is. Raises :class:`ConfigError` naming ``option`` and ``force_option``.
    """
    target = output_path(path, option)
    if target.is_symlink():
        raise ConfigError(
            f"{target}: is a symbolic link; recworld never writes through one "
            f"(give the real folder{' as ' + option if option else ''})"
        )
    _no_link_inside_an_output(target)
    with writing(target):
        recover(target)
    if not target.exists():
        return target
    if not target.is_dir():
        raise ConfigError(f"{target}: exists and is not a directory; choose another {option or 'folder'}")
    if not [p for p in target.iterdir() if not is_temporary(p, CLAIM_FILE)]:
        return target  # empty, or only a claim a kill cut off before it was whole
    marker = read_marker(target)
    kinds = set(marker.kinds if marker is not None else ()) | claimed_kinds(target)
    if kind in kinds or kinds & set(joins) or force:
        return target
    if marker is not None:
        why = f"holds a {', '.join(repr(k) for k in marker.kinds)} output"
    elif kinds:
        why = f"is being written by an unfinished {', '.join(repr(k) for k in sorted(kinds))} run"
    else:
        why = "is not empty and was not written by recworld"
    raise _refusal(target, kind, why, option, force_option)


def claim_output_dir(
    path: str | Path,
    kind: str,
    *,
    force: bool = False,
    joins: Collection[str] = (),
    option: str = "--out",
    force_option: str | None = "--force",
) -> Path:
    """:func:`check_output_dir`, then take the folder for an in-place writer; returns it absolute.

    The folder is created; unless it already carries the marker of ``kind``, a
    claim for ``kind`` is recorded in it (what lets a killed run resume), and every
    write below it is kept from following a link (:func:`recworld.io.files.confine`).
    Call :func:`mark_output_dir` when the command has succeeded.
    """
    target = check_output_dir(path, kind, force=force, joins=joins, option=option, force_option=force_option)
    with writing(target):
        target.mkdir(parents=True, exist_ok=True)
    confine(target)
    sweep_temporary(target)  # what a killed writer left half-written (never a live one's)
    with output_lock(target):
        marker = read_marker(target)
        claimed = claimed_kinds(target)
        if (marker is None or kind not in marker.kinds) and kind not in claimed:
            write_claim(target, claimed | {kind})
            fault_point("claim.recorded", target)
    return target


def require_output(path: str | Path, kind: str, *, made_by: str, argument: str = "ROOT") -> Path:
    """``path`` must hold a finished ``kind`` output (its marker) to be written into; returns it absolute.

    For commands that add to an output another command made (``lunar queries ROOT``
    after ``lunar synth``). Writes below it are confined like a claim's.
    """
    target = normal(path)
    if target.is_symlink():
        raise ConfigError(f"{target}: is a symbolic link; give the real folder as {argument}")
    if not target.is_dir():
        raise ConfigError(f"{target}: no such folder; {argument} is a folder written by {made_by}")
    marker = read_marker(target)
    if marker is None or kind not in marker.kinds:
        unfinished = kind in claimed_kinds(target)
        why = f"{made_by} has not finished there" if unfinished else f"it was not written by {made_by}"
        raise ConfigError(
            f"{target}: {why}; {argument} must be a folder a finished `recworld {made_by}` wrote"
        )
    confine(target)
    sweep_temporary(target)
    return target


def mark_output_dir(path: str | Path, kind: str) -> None:
    """Add ``kind`` to the marker of ``path`` (the command writing it has succeeded) and drop its claim."""
    target = normal(path)
    target.mkdir(parents=True, exist_ok=True)
    with output_lock(target):
        marker = read_marker(target)
        kinds = set(marker.kinds if marker is not None else ()) | {kind}
        if marker is None or set(marker.kinds) != kinds:
            files = marker.files if marker is not None else None
            kept = marker.digests if marker is not None else None
            new = OutputMarker(
                kinds=tuple(sorted(kinds)), created_by=_created_by(), files=files, digests=kept
            )
            atomic_write_json(target / OUTPUT_MARKER, new.to_json())
            fault_point("marker.written", target)
        claimed = claimed_kinds(target)
        if kind in claimed:
            write_claim(target, claimed - {kind})


@contextlib.contextmanager
def output_lock(path: str | Path) -> Iterator[None]:
    """An exclusive ``flock`` on the folder ``path``: writers of one output take turns (blocking)."""
    fd = os.open(normal(path), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def output_directory(
    path: str | Path,
    kind: str,
    *,
    force: bool = False,
    option: str = "--out",
    force_option: str | None = "--force",
) -> Iterator[Path]:
    """:func:`check_output_dir`, then build the output whole and swap it in, marked, keeping foreign files.

    The marker, written into the staging folder last, lists the files the output
    wrote; what the old folder held beyond the old output's own files (``runs/``
    beside a suite, a user's notes, at any depth) is carried over.
    """
    target = check_output_dir(path, kind, force=force, option=option, force_option=force_option)
    old = read_marker(target) if target.is_dir() else None
    with atomic_directory(target, carry=True) as staging:
        yield staging
        kinds = {kind, *(old.kinds if old is not None else ())}
        files = tuple(listed_files(staging, skip={OUTPUT_MARKER, CLAIM_FILE}))
        marker = OutputMarker(
            kinds=tuple(sorted(kinds)), created_by=_created_by(), files=files, digests=digests(staging, files)
        )
        atomic_write_json(staging / OUTPUT_MARKER, marker.to_json())
