"""Killing a command at a named step, and reading an output folder the way a comparison needs it.

:func:`killed_at` forks: the child runs the command in process with a
:func:`recworld.io.fault_hook` that calls ``os._exit`` at the chosen passage of
a kill point, which is what ``kill -9`` does at that instant (no ``finally``,
no ``atexit``, no flush), and the parent sees the folder exactly as the kill
left it. :func:`passages` lists every kill point a command passes, in order.
(:mod:`kill_child` does the same from a clean server process, for commands that
cannot run in a child of the test process.)
"""

from __future__ import annotations

import json
import os
import re
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path

from recworld.io import fault_hook

KILLED = 137
# Keys whose values differ between two identical runs (clocks, timings, the writer's version).
VOLATILE_KEYS = frozenset(
    {"latency_s", "started", "finished", "timings", "created", "created_by", "seconds", "elapsed_s"}
    | {"resumed", "runner"}  # how much a rerun found done, and what its engine did this time
    | {"digests"}  # a marker's file hashes: a file naming its folder hashes differently elsewhere
)
# Files whose bytes differ between identical runs, or that only record what happened.
VOLATILE_FILES = ("recworld.log", "cache.sqlite", "embeddings.sqlite", ".samples.journal.jsonl")
LITTER = (".partial", ".swap.json", ".tmp")


def passages(work: Callable[[], object]) -> list[tuple[str, Path]]:
    """Every ``(kill point, path)`` ``work`` passes, in order (run here, in process)."""
    seen: list[tuple[str, Path]] = []
    with fault_hook(lambda point, path: seen.append((point, path))):
        work()
    return seen


def kill_hook(point: str, nth: int) -> Callable[[str, Path], None]:
    """A :func:`recworld.io.fault_hook` hook that exits :data:`KILLED` at the ``nth`` ``point``."""
    count = 0

    def hook(name: str, _path: Path) -> None:
        nonlocal count
        if name == point:
            count += 1
            if count == nth:
                os._exit(KILLED)

    return hook


def killed_at(point: str, nth: int, work: Callable[[], int]) -> int:
    """Run ``work`` in a forked child killed at the ``nth`` (1-based) passage of ``point``.

    Returns the child's exit code: :data:`KILLED` when the kill landed, else what
    ``work`` returned (an exception in the child is printed and exits 3).
    """
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 3
        try:
            with fault_hook(kill_hook(point, nth)):
                code = work()
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _clean(value: object) -> object:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in sorted(value.items()) if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


_CLOCK = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")


def _content(path: Path, base: bytes) -> object:
    data = path.read_bytes().replace(base, b"<work>") if base else path.read_bytes()
    data = _CLOCK.sub(b"<time>", data)  # when a run started, in the report's tables
    if path.suffix == ".json":
        return _clean(json.loads(data))
    if path.suffix == ".jsonl":
        return sorted(
            json.dumps(_clean(json.loads(line)), sort_keys=True) for line in data.splitlines() if line
        )
    return data


def tree(root: Path, *, base: Path | None = None, skip: Iterable[str] = VOLATILE_FILES) -> dict[str, object]:
    """Each file below ``root`` (relative path) with its content, volatile fields and files left out.

    ``base`` (the scratch folder a command ran in) is written ``<work>`` wherever
    a file names it, so runs in two folders compare equal.
    """
    skipped = tuple(skip)
    prefix = str(base).encode() if base is not None else b""
    out: dict[str, object] = {}
    if not root.is_dir():
        return out
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_dir() or any(relative.endswith(s) or f"/{s}" in relative for s in skipped):
            continue
        if path.name.startswith(("cache.sqlite", "embeddings.sqlite")):
            continue
        out[relative] = _content(path, prefix)
    return out


def litter(folder: Path) -> list[str]:
    """Staging folders, swap journals, temporary files or trash left anywhere below ``folder``."""
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob(".*") if p.name.endswith(LITTER) or ".old-" in p.name
    )
