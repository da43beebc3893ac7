"""Planted folder states for the untrusted-disk tests, and a checker that shares no code with recworld.io.

:func:`snapshot` reads a tree with ``os.walk`` and ``os.lstat`` only: every
entry's kind and, for a file, its bytes; for a link, its text. A test takes one
before and one after recworld acts, and compares them itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import string
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from hypothesis import strategies as st

Entry = tuple[str, ...] | tuple[str, bytes]
HEX = "0123456789abcdef"
NAME = "suite"


def snapshot(root: Path) -> dict[str, Entry]:
    """Every entry below ``root`` (relative POSIX path) with its kind and content; links are not followed."""
    found: dict[str, Entry] = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                found[relative] = ("link", os.readlink(path))
            elif stat.S_ISDIR(mode):
                found[relative] = ("dir",)
            elif stat.S_ISFIFO(mode):
                found[relative] = ("fifo",)
            elif stat.S_ISREG(mode):
                with open(path, "rb") as handle:
                    found[relative] = ("file", handle.read())
            else:
                found[relative] = ("other",)
    return found


def lost(before: dict[str, Entry], after: dict[str, Entry], *, skip: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """Entries of ``before`` not in ``after`` as they were (missing or changed), less ``skip``."""
    return sorted(p for p, e in before.items() if p not in skip and after.get(p) != e)


class HungError(Exception):
    """A call that did not return in time (a FIFO open, say)."""


@contextlib.contextmanager
def deadline(seconds: int = 10) -> Iterator[None]:
    """Raise :class:`HungError` in the block after ``seconds``: a hang fails the example, not the suite."""

    def fire(_signum: int, _frame: FrameType | None) -> None:
        raise HungError(f"no return after {seconds}s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def hexes(n: int) -> st.SearchStrategy[str]:
    return st.text(HEX, min_size=n, max_size=n)


# Names a user (or a crafted suite) may give a sibling of the output: every form recworld generates,
# with seals and nonces that are not this user's, and plain look-alikes.
LOOKALIKES: st.SearchStrategy[str] = st.one_of(
    st.builds(
        lambda s: f".{NAME}.old-{s}",
        st.text(string.ascii_letters + string.digits + "-_", min_size=1, max_size=24),
    ),
    st.builds(lambda a, b: f".{NAME}.old-{a}{b}", hexes(8), hexes(16)),
    st.builds(
        lambda s: f".{NAME}.{s}.partial",
        st.text(string.ascii_lowercase + string.digits + "_", min_size=8, max_size=8),
    ),
    st.builds(lambda a, b: f".{NAME}.{a}{b}.partial", hexes(8), hexes(16)),
    st.builds(lambda a: f".{NAME}.{a}.new", hexes(8)),
    st.builds(lambda a, b: f".{NAME}.swap.json.{a}{b}.tmp", hexes(8), hexes(16)),
    st.builds(
        lambda s: f".{NAME}.swap.json.{s}.tmp",
        st.text(string.ascii_lowercase + string.digits, min_size=8, max_size=8),
    ),
    st.sampled_from(
        ["victim", "Downloads", f".{NAME}.old-v1", f"{NAME}-backup", f".{NAME}", f"..{NAME}.old-1"]
    ),
)
KINDS = st.sampled_from(["dir", "deep", "file", "fifo", "link-out", "link-up", "empty"])
# File names a user keeps at any depth of an output, temporary look-alikes among them.
USER_NAMES: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(["notes.txt", "my-run", "drafts", "runs", "questions", "report.md", "mine.csv"]),
    st.builds(
        lambda b, s: f".{b}.{s}.tmp",
        st.sampled_from(["x", "chapter1", "run.json", "manifest.json", ".recworld-claim.json"]),
        st.text(string.ascii_lowercase + string.digits + "_", min_size=8, max_size=8),
    ),
    st.builds(
        lambda b, a, s: f".{b}.{a}{s}.tmp",
        st.sampled_from(["x", "run.json", "manifest.json"]),
        hexes(8),
        hexes(16),
    ),
    st.just(".chapter1.20240101.tmp"),
)


def plant(path: Path, kind: str, outside: Path, content: bytes = b"mine\n") -> None:
    """Put one entry of ``kind`` at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "dir":
        path.mkdir()
        (path / "important.txt").write_bytes(content)
    elif kind == "deep":
        (path / "runs" / "my-run").mkdir(parents=True)
        (path / "runs" / "my-run" / "questions.txt").write_bytes(content)
        (path / "manifest.json").write_bytes(b'{"old": "manifest"}')
    elif kind == "empty":
        path.mkdir()
    elif kind == "file":
        path.write_bytes(content)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-out":
        path.symlink_to(outside, target_is_directory=True)
    elif kind == "link-up":
        path.symlink_to("..", target_is_directory=True)
    else:
        raise ValueError(kind)


def identity_of(path: Path) -> list[int]:
    info = os.lstat(path)
    return [info.st_dev, info.st_ino]
