"""A rich progress bar for long runs: done/total, throughput, ETA, errors, retries.

It draws only on an interactive terminal; in CI logs, pipes and tests it is a
no-op, so output files and captured logs stay clean.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import Progress, Task, TaskID
    from rich.text import Text


def _throughput_column() -> Any:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class ThroughputColumn(ProgressColumn):
        """Completed requests per second since the bar started."""

        def render(self, task: Task) -> Text:
            elapsed = task.elapsed or 0.0
            rate = task.completed / elapsed if elapsed > 0 else 0.0
            return Text(f"{rate:6.1f} req/s", style="progress.data.speed")

    return ThroughputColumn()


class ProgressBar:
    """One bar for one :meth:`Runner.map` call."""

    def __init__(self, total: int, description: str, *, enabled: bool) -> None:
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self.errors = 0
        self.retries = 0
        if not enabled or total == 0 or not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _throughput_column(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("errors {task.fields[errors]} retries {task.fields[retries]}"),
            console=Console(stderr=True),
        )
        self._progress.start()
        from rich.markup import escape

        # The description names a model: "[...]" in it is text, never Rich markup.
        label = escape(description or "requests")
        self._task = self._progress.add_task(label, total=total, errors=0, retries=0)

    @property
    def enabled(self) -> bool:
        return self._progress is not None

    def advance(self, *, error: bool, retries: int) -> None:
        self.errors += int(error)
        self.retries += retries
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, errors=self.errors, retries=self.retries)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
