"""Progress on stderr: a rich display on a terminal, plain lines everywhere else.

* :class:`StageProgress`, for commands made of stages (``build``, ``report``): two
  lines, the overall steps (k/N, elapsed) and the step now running, with a bar
  when its length is known (NeuMF epochs) and a spinner otherwise, on an
  interactive stderr. Elsewhere, with ``plain=True``, it writes plain lines
  instead: one when the step changes and, from a timer thread, one at least
  every ``every_s`` seconds (what, done/total, elapsed, an estimate), so a
  piped ``build`` is never silent for minutes; without ``plain`` it is a no-op.
* :class:`ProgressLines`, for long loops when stderr is *not* a terminal: one
  plain line per N items or per T seconds, on stderr and in the log, so a run
  in a pipe, a CI log or a notebook is never silent for minutes.
* :func:`notice`: one such line (an estimate before a long wait, say).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

_log = logging.getLogger("recworld.progress")


class StageProgress:
    """Overall ``k/N`` plus the current step; use as a context manager."""

    def __init__(
        self,
        *,
        enabled: bool,
        width: int = 80,
        console: Console | None = None,
        plain: bool = False,
        label: str = "",
        every_s: float = 30.0,
    ) -> None:
        """``console`` (default: stderr, when it is a terminal) is where the display is drawn.

        ``plain``: when stderr is not a terminal, write :class:`PlainStages` lines
        (prefixed ``label``) instead of nothing.
        """
        self._progress: Progress | None = None
        self._overall: TaskID | None = None
        self._step: TaskID | None = None
        self._plain: PlainStages | None = None
        if not enabled:
            return
        if console is None and not sys.stderr.isatty():
            if plain:
                self._plain = PlainStages(label, every_s=every_s)
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
        return self._progress is not None or self._plain is not None

    def lines(self) -> list[tuple[str, float | None, float]]:
        """(description, total, completed) of each line shown now."""
        if self._progress is None:
            return []
        return [(str(t.description).strip(), t.total, t.completed) for t in self._progress.tasks]

    def __enter__(self) -> StageProgress:
        if self._progress is not None:
            self._progress.start()
        if self._plain is not None:
            self._plain.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
        if self._plain is not None:
            self._plain.stop()

    def overall(self, description: str, done: int, total: int | None) -> None:
        """Set the top line: ``description`` with ``done`` of ``total`` steps."""
        if self._plain is not None:
            self._plain.overall(description, done, total)
        if self._progress is None:
            return
        if self._overall is None:
            self._overall = self._progress.add_task(_fit(description), total=total, completed=done)
        else:
            self._progress.update(self._overall, description=_fit(description), completed=done, total=total)

    def step(self, description: str, done: int = 0, total: int | None = None) -> None:
        """Set the second line: the step now running (``total`` None: a spinner, no bar)."""
        if self._plain is not None:
            self._plain.step(description, done, total)
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


class PlainStages:
    """:class:`StageProgress` as plain lines (stderr not a terminal): on each new step, and every ``every_s``.

    A line reads ``progress: build: measures 3/10 (30.0%), building kg_movie_genre,
    1m12s elapsed, about 2m48s left``; the estimate extrapolates the overall
    steps (or the step's own count, when only it has one) from the time so far.
    """

    def __init__(self, label: str, *, every_s: float = 30.0) -> None:
        self.label, self.every_s = label, every_s
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = self._last = time.monotonic()
        self._overall: tuple[str, int, int | None] = ("", 0, None)
        self._overall_since = self._started
        self._step: tuple[str, int, int | None] = ("", 0, None)
        self._step_since = self._started
        self.lines_written = 0

    def start(self) -> None:
        self._started = self._last = self._overall_since = self._step_since = time.monotonic()
        self._thread = threading.Thread(target=self._tick, name="recworld-stages", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def overall(self, description: str, done: int, total: int | None) -> None:
        with self._lock:
            if description != self._overall[0] or total != self._overall[2]:
                self._overall_since = time.monotonic()
            self._overall = (description, done, total)

    def step(self, description: str, done: int, total: int | None) -> None:
        with self._lock:
            new = description != self._step[0]
            if new:
                self._step_since = time.monotonic()
            self._step = (description, done, total)
        if new:
            self._emit()

    def line(self) -> str:
        now = time.monotonic()
        with self._lock:
            (what, done, total), (step, s_done, s_total) = self._overall, self._step
            overall_since, step_since = self._overall_since, self._step_since
        parts = []
        if what:
            parts.append(
                f"{what} {done}/{total}" + (f" ({done / total:.1%})" if total else "") if total else what
            )
        if step and step != what:
            parts.append(f"{step} {s_done}/{s_total}" if s_total else step)
        parts.append(f"{clock(now - self._started)} elapsed")
        left = _estimate(done, total, now - overall_since) or _estimate(s_done, s_total, now - step_since)
        if left is not None:
            parts.append(f"about {clock(left)} left" + ("" if total else " in this step"))
        return (
            f"progress: {self.label}: " + ", ".join(parts) if self.label else "progress: " + ", ".join(parts)
        )

    def _tick(self) -> None:
        while not self._stop.wait(max(0.01, self._last + self.every_s - time.monotonic())):
            if time.monotonic() - self._last >= self.every_s - 0.005:
                self._emit()

    def _emit(self) -> None:
        text = self.line()
        with self._lock:
            self._last = time.monotonic()
            self.lines_written += 1
        notice(text)


def _estimate(done: int, total: int | None, elapsed: float) -> float | None:
    """Seconds left at the rate so far (None: nothing done yet, or no total)."""
    if not total or done <= 0 or done >= total:
        return None
    return elapsed / done * (total - done)


class ProgressLines:
    """Progress as plain lines, for a long loop whose stderr is not a terminal (logs, pipes, notebooks).

    A line goes out every ``every_n`` items and, from a timer thread, at least
    every ``every_s`` seconds, so a slow local model that takes two minutes per
    question still says it is alive. Each line goes to the ``recworld`` log
    (hence a run folder's ``recworld.log``) and to stderr. Use as a context
    manager and call :meth:`advance` as items finish; the last line is written on exit.
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        done: int = 0,
        every_s: float = 30.0,
        every_n: int | None = None,
        noun: str = "answered",
    ) -> None:
        self.label, self.total, self.noun = label, total, noun
        self.every_s = every_s
        self.every_n = every_n if every_n is not None else max(1, -(-total // 10))
        self.done = self.errors = 0
        self._offset = done  # finished before this invocation: shown, not counted in the rate
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = self._last = time.monotonic()
        self._last_done = 0
        self.lines_written = 0
        self.refresh: Callable[[], None] | None = None  # called before each line is written

    def __enter__(self) -> ProgressLines:
        self._started = self._last = time.monotonic()
        self._thread = threading.Thread(target=self._tick, name="recworld-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        if self.done != self._last_done:
            self._emit()

    def advance(self, *, error: bool = False) -> None:
        """One more item finished (``error``: it failed)."""
        with self._lock:
            self.done += 1
            self.errors += int(error)
            due = self.done - self._last_done >= self.every_n
        if due:
            self._emit()

    def line(self) -> str:
        """``progress: LABEL: 40/600 answered (6.7%), 2 errors, 1m12s elapsed, about 17m left``."""
        elapsed = time.monotonic() - self._started
        shown = self._offset + self.done
        if not self.total and not shown:  # nothing counted yet: say so, never "0/0"
            return f"progress: {self.label}: nothing to count yet, {clock(elapsed)} elapsed"
        share = f" ({shown / self.total:.1%})" if self.total else ""
        parts = [
            f"{shown}/{self.total} {self.noun}{share}",
            f"{self.errors} errors",
            f"{clock(elapsed)} elapsed",
        ]
        left = self.total - shown
        if self.done and left > 0:
            parts.append(f"about {clock(elapsed / self.done * left)} left")
        return f"progress: {self.label}: " + ", ".join(parts)

    def _tick(self) -> None:
        """Wake when the next line is due (an item's line moves that time on), and write it."""
        while not self._stop.wait(max(0.01, self._last + self.every_s - time.monotonic())):
            if time.monotonic() - self._last >= self.every_s - 0.005:
                self._emit()

    def _emit(self) -> None:
        if self.refresh is not None:
            self.refresh()  # the owner's last word on the label and the total
        with self._lock:
            text = self.line()
            self._last, self._last_done = time.monotonic(), self.done
            self.lines_written += 1
        notice(text)


def notice(text: str) -> None:
    """A line a person waiting should see: on stderr whatever ``--log-level`` says, and in the log."""
    from recworld.console.logs import shows_on_stderr

    _log.info("%s", text)
    if not shows_on_stderr(logging.INFO):
        sys.stderr.write(f"recworld: {text}\n")
        sys.stderr.flush()


def clock(seconds: float) -> str:
    """``45s``, ``12m05s``, ``2h03m``: a duration as a person reads it."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
