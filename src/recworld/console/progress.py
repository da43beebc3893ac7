"""Progress for commands made of stages (``build``), drawn with rich on stderr.

Two lines: the overall steps (k/N, elapsed) and the step now running, with a
bar when its length is known (NeuMF epochs) and a spinner otherwise. Only on
an interactive stderr and when not switched off; elsewhere every call is a
no-op, so logs and pipes stay clean.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID


class StageProgress:
    """Overall ``k/N`` plus the current step; use as a context manager."""

    def __init__(self, *, enabled: bool, width: int = 80, console: Console | None = None) -> None:
        """``console`` (default: stderr, when it is a terminal) is where the display is drawn."""
        self._progress: Progress | None = None
        self._overall: TaskID | None = None
        self._step: TaskID | None = None
        if not enabled or (console is None and not sys.stderr.isatty()):
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        console = console or Console(stderr=True)
        console.width = min(width, console.width)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(bar_width=16),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )

    @property
    def enabled(self) -> bool:
        return self._progress is not None

    def lines(self) -> list[tuple[str, float | None, float]]:
        """(description, total, completed) of each line shown now."""
        if self._progress is None:
            return []
        return [(str(t.description).strip(), t.total, t.completed) for t in self._progress.tasks]

    def __enter__(self) -> StageProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def overall(self, description: str, done: int, total: int | None) -> None:
        """Set the top line: ``description`` with ``done`` of ``total`` steps."""
        if self._progress is None:
            return
        if self._overall is None:
            self._overall = self._progress.add_task(_fit(description), total=total, completed=done)
        else:
            self._progress.update(self._overall, description=_fit(description), completed=done, total=total)

    def step(self, description: str, done: int = 0, total: int | None = None) -> None:
        """Set the second line: the step now running (``total`` None: a spinner, no bar)."""
        if self._progress is None:
            return
        if self._step is not None and self._progress.tasks[-1].total != total:
            self._progress.remove_task(self._step)  # rich cannot set a total back to "unknown"
            self._step = None
        if self._step is None:
            self._step = self._progress.add_task(_fit(description), total=total, completed=done)
        else:
            self._progress.update(self._step, description=_fit(description), completed=done)


def _fit(text: str, width: int = 34) -> str:
    """Pad or shorten a description so the columns stay put and the line fits 80 columns."""
    from rich.markup import escape

    from recworld.console.terminal import strip_control

    text = strip_control(text)
    text = text if len(text) <= width else text[: width - 1] + "…"
    return escape(text.ljust(width))
