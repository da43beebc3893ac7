"""What a long LUNAR command says while it works: plain progress lines, and the cost before the wait.

Two sinks of :mod:`recworld.lunar.llm.tracking`:

* :class:`PieceLines`: when stderr is not a terminal (a pipe, a CI log, a notebook),
  one line per tenth of the pieces or every 30 seconds, whichever comes first, on
  stderr and in ``recworld.log`` (:class:`recworld.console.progress.ProgressLines`, as
  ``recworld eval`` writes them). The total is the dry-run plan's (computed on a
  thread at the start), or the pieces asked so far until it is known. A terminal
  gets the live display instead.
* :class:`CostEstimate`: when the command opens a local model (one with a concurrency
  bound: llama.cpp, transformers), the command's dry-run plan (what ``--dry-run``
  prints) is computed on a thread, the first request the model really answers is
  timed, and the rest is estimated from the plan: requests left times that latency,
  over the requests the model serves at once. It is printed when it is over a
  minute (logged always). The plan counts upper bounds for stages whose prompts
  depend on earlier replies, so the estimate is one too.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Mapping
from types import TracebackType

from recworld.console.progress import ProgressLines, clock, notice
from recworld.lunar.llm.plan import PlannedStage
from recworld.lunar.llm.tracking import Tracker

__all__ = ["EVERY_S", "SAY_ABOVE_S", "BackgroundPlan", "CostEstimate", "PieceLines"]

_log = logging.getLogger(__name__)

EVERY_S = 30.0  # a line at least this often, however slow the model
SAY_ABOVE_S = 60.0  # estimates shorter than this are only logged
PLAN_WAIT_S = 5.0  # how long the first progress line waits for the plan's total (it is prompt building only)
Plan = Callable[[], Mapping[str, PlannedStage]]


class BackgroundPlan:
    """A command's dry-run plan, computed on a daemon thread once it is wanted."""

    def __init__(self, plan: Plan) -> None:
        self._plan = plan
        self._thread: threading.Thread | None = None
        self._stages: dict[str, PlannedStage] | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="recworld-lunar-plan", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            self._stages = dict(self._plan())
        except Exception as exc:  # advisory only: the command itself reports what is wrong
            _log.debug("no cost estimate: the dry-run plan failed (%s)", exc)

    def wait(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def stages(self) -> dict[str, PlannedStage] | None:
        """The plan's stages once computed; None before (or when it failed)."""
        return self._stages

    @property
    def requests(self) -> int | None:
        return None if self._stages is None else sum(s.requests for s in self._stages.values())


class PieceLines:
    """Plain progress lines of one LUNAR command (a :class:`~recworld.lunar.llm.tracking.Sink`)."""

    def __init__(
        self, command: str, plan: BackgroundPlan | None = None, *, every_s: float | None = None
    ) -> None:
        self.command, self.plan = command, plan
        self.tracker: Tracker | None = None
        every = EVERY_S if every_s is None else every_s  # read now: a test may shorten it
        self.lines = ProgressLines(self._label(), 0, every_s=every, every_n=1, noun="pieces answered")
        self.lines.refresh = self._refresh

    def __enter__(self) -> PieceLines:
        if self.plan is not None:  # the total the lines count towards, known before the first line
            self.plan.start()
            self.plan.wait(PLAN_WAIT_S)  # review U15: "0/0 pieces" while a model loads
            self._set_total(self.plan.requests or 0)
        self.lines.__enter__()
        return self

    def _set_total(self, total: int) -> None:
        if total != self.lines.total:
            self.lines.total = total
            self.lines.every_n = max(1, math.ceil(total / 10))

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.lines.__exit__(kind, exc, tb)

    def _label(self, stage: str = "") -> str:
        """``lunar eval (stage 2 of 3: judge; at most 40 planned)``; before any piece, what it prepares."""
        stages = self.plan.stages if self.plan is not None else None
        planned = self.plan.requests if self.plan is not None else None
        at_most = f"; at most {planned} planned" if planned else ""
        if not stage:
            counted = f"{len(stages)} stages planned" if stages else "counting the plan"
            return f"lunar {self.command} (preparing: reading the inputs, opening the models; {counted})"
        names = list(stages or ())
        where = f"stage {names.index(stage) + 1} of {len(names)}: {stage}" if stage in names else stage
        return f"lunar {self.command} ({where}{at_most})"

    def _refresh(self) -> None:
        if self.tracker is None:
            self.lines.label = self._label()
        else:
            self._total(self.tracker)

    def _total(self, tracker: Tracker) -> None:
        self.tracker = tracker
        planned = self.plan.requests if self.plan is not None else None
        self._set_total(max(planned or 0, tracker.total))
        self.lines.label = self._label(next(reversed(tracker.stages), ""))

    def asked(self, tracker: Tracker, stage: str) -> None:
        self._total(tracker)

    def answered(self, tracker: Tracker, stage: str, *, failed: bool) -> None:
        self._total(tracker)
        self.lines.advance(error=failed)

    def opened(self, tracker: Tracker, bound: int | None, concurrency: int) -> None:
        return None

    def completed(self, tracker: Tracker, latency_s: float, *, cache_hit: bool) -> None:
        return None


class CostEstimate:
    """The estimate a local model's command prints before the long wait (a tracking sink)."""

    def __init__(self, command: str, plan: BackgroundPlan) -> None:
        self.command, self.plan = command, plan
        self.parallel: int | None = None  # requests the local models serve at once (None: no local model)
        self.latency: float | None = None
        self.said: str | None = None

    def opened(self, tracker: Tracker, bound: int | None, concurrency: int) -> None:
        if bound is None:
            return
        serves = max(1, min(bound, concurrency))
        self.parallel = serves if self.parallel is None else min(self.parallel, serves)
        self.plan.start()

    def completed(self, tracker: Tracker, latency_s: float, *, cache_hit: bool) -> None:
        if self.parallel is not None and not cache_hit and latency_s > 0 and self.latency is None:
            self.latency = latency_s
            self.plan.wait(timeout=0.0)
            self._say(tracker)

    def answered(self, tracker: Tracker, stage: str, *, failed: bool) -> None:
        if self.latency is not None and self.said is None:
            self._say(tracker)  # the plan was still being computed at the first answer

    def asked(self, tracker: Tracker, stage: str) -> None:
        return None

    def _say(self, tracker: Tracker) -> None:
        stages, latency, parallel = self.plan.stages, self.latency, self.parallel
        if stages is None or latency is None or parallel is None:
            return
        planned = sum(s.requests for s in stages.values())
        left = max(planned - tracker.done, 0)
        seconds = latency * left / parallel
        rendered = [s.prompt_tokens for s in stages.values() if s.prompt_tokens is not None]
        tokens = f", ~{sum(rendered):,} prompt tokens in the stages rendered now" if rendered else ""
        self.said = (
            f"estimate: lunar {self.command}: at most {left} more requests of {planned} planned{tokens}; "
            f"about {clock(seconds)} at {latency:.1f}s per request (measured on one), {parallel} at a time; "
            "Ctrl-C stops and a rerun resumes"
        )
        if seconds > SAY_ABOVE_S:
            notice(self.said)
        else:
            _log.info("%s", self.said)
