"""What Ctrl-C prints: how far a long command got and how to carry on.

A long command wraps its work in :func:`resumable` and updates ``done`` as
answers arrive; the entry point prints :func:`interrupt_message` and exits 130.
Without the hook a person sees only that the command stopped, not whether the
work so far is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

RESUME_HINT = "rerun the same command to resume"


@dataclass
class Resume:
    """Progress of the command now running, as Ctrl-C reports it."""

    done: int = 0
    total: int | None = None
    noun: str = "answered"
    hint: str = RESUME_HINT

    def message(self) -> str:
        count = f"{self.done}/{self.total} {self.noun}" if self.total is not None else ""
        return "; ".join(part for part in (count, self.hint) if part)


_interrupted: list[Resume] = []


@contextmanager
def resumable(
    total: int | None = None, *, noun: str = "answered", hint: str = RESUME_HINT
) -> Iterator[Resume]:
    """Report ``done/total`` if Ctrl-C arrives inside the block; set ``note.done`` as work completes."""
    note = Resume(total=total, noun=noun, hint=hint)
    try:
        yield note
    except KeyboardInterrupt:
        if not _interrupted:  # the innermost block saw it first
            _interrupted.append(note)
        raise


def interrupt_message() -> str:
    """``interrupted`` plus the innermost interrupted block's progress; clears it for the next command."""
    notes, _interrupted[:] = list(_interrupted), []
    detail = notes[0].message() if notes else ""
    return f"interrupted: {detail}" if detail else "interrupted"
