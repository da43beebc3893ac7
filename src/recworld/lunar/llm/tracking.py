"""Live progress of a LUNAR command: pieces asked and answered, per stage, on stderr and for Ctrl-C.

LUNAR asks one piece at a time (a profile, a week, an answer, a judgment) from many
coroutines, so the runner's per-``map`` bar never shows. :class:`StructuredLLM`
reports each piece here instead, through a context variable the command sets with
:func:`tracking`; a library caller that sets nothing pays nothing. The same counts
feed the Ctrl-C line (``interrupted: 12/40 pieces answered; rerun the same command to
resume``): answered pieces are in the cache, so a rerun picks up there.

A command adds sinks (:class:`Sink`) for what the terminal display cannot carry: plain
progress lines when stderr is not a terminal, and the cost estimate of a local
model (:mod:`recworld.lunar.cli.progress`). Besides the pieces, a sink hears of
each model the command opens (its concurrency bound) and of each completion the
runner returns (its latency, and whether the cache answered it).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from recworld.console import Resume
    from recworld.console.progress import StageProgress

NOUN = "pieces answered"
HINT = "answered pieces are cached; rerun the same command to resume"


class Sink(Protocol):
    """Something that follows a command's pieces besides the terminal display."""

    def asked(self, tracker: Tracker, stage: str) -> None: ...

    def answered(self, tracker: Tracker, stage: str, *, failed: bool) -> None: ...

    def opened(self, tracker: Tracker, bound: int | None, concurrency: int) -> None: ...

    def completed(self, tracker: Tracker, latency_s: float, *, cache_hit: bool) -> None: ...


class Tracker:
    """Counts of one command's pieces, drawn as ``lunar STAGE k/N`` plus the stage now asking."""

    def __init__(
        self,
        command: str,
        view: StageProgress | None = None,
        note: Resume | None = None,
        sinks: Sequence[Sink] = (),
    ) -> None:
        self.command = command
        self.view = view
        self.note = note
        self.sinks = list(sinks)
        self.total = 0
        self.done = 0
        self.failed = 0
        self.stages: dict[str, list[int]] = {}  # stage -> [done, asked]

    def asked(self, stage: str) -> None:
        self.total += 1
        self.stages.setdefault(stage, [0, 0])[1] += 1
        self._draw(stage)
        for sink in self.sinks:
            sink.asked(self, stage)

    def answered(self, stage: str, *, failed: bool) -> None:
        self.done += 1
        self.failed += int(failed)
        self.stages.setdefault(stage, [0, 0])[0] += 1
        self._draw(stage)
        for sink in self.sinks:
            sink.answered(self, stage, failed=failed)

    def opened(self, bound: int | None, concurrency: int) -> None:
        """A model was opened: it serves ``bound`` requests at once (None: no bound), sent ``concurrency``."""
        for sink in self.sinks:
            sink.opened(self, bound, concurrency)

    def completed(self, latency_s: float, *, cache_hit: bool) -> None:
        """The runner returned one completion (an attempt of a piece)."""
        for sink in self.sinks:
            sink.completed(self, latency_s, cache_hit=cache_hit)

    def _draw(self, stage: str) -> None:
        if self.note is not None:
            self.note.done, self.note.total = self.done, self.total
        if self.view is not None:
            failed = f", {self.failed} failed" if self.failed else ""
            self.view.overall(f"lunar {self.command}{failed}", self.done, self.total)
            done, asked = self.stages[stage]
            self.view.step(stage, done, asked)


_current: ContextVar[Tracker | None] = ContextVar("recworld_lunar_tracker", default=None)


def current() -> Tracker | None:
    """The tracker of the command now running, or None (library use)."""
    return _current.get()


@contextmanager
def tracking(
    command: str, *, progress: bool, sinks: Sequence[Sink | AbstractContextManager[Sink]] = ()
) -> Iterator[Tracker]:
    """Track ``lunar COMMAND``'s pieces: drawn on a terminal (when ``progress``), and Ctrl-C's k/N.

    ``sinks`` hear every piece too; one that is a context manager is entered for the command.
    """
    from recworld.console import resumable
    from recworld.console.progress import StageProgress

    with (
        resumable(total=None, noun=NOUN, hint=HINT) as note,
        StageProgress(enabled=progress) as view,
        ExitStack() as stack,
    ):
        entered = [stack.enter_context(s) if isinstance(s, AbstractContextManager) else s for s in sinks]
        tracker = Tracker(command, view if view.enabled else None, note, entered)
        token = _current.set(tracker)
        try:
            yield tracker
        finally:
            _current.reset(token)
