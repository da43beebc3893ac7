"""What ``recworld build`` shows while it works: a progress display on stderr and INFO log lines.

NeuMF alone can take minutes on a large dataset, so a silent build looks hung.
The display is :class:`~recworld.console.progress.StageProgress`: a live
display on a terminal, and plain ``progress:`` lines on stderr elsewhere (a
pipe, a CI log), one per step and at least every 30 s, with done/total and an
estimate once the measures are counted. The same events go to the log.
"""

from __future__ import annotations

import logging
from types import TracebackType

from recworld.console.progress import StageProgress

_log = logging.getLogger(__name__)

STAGE_LABELS = {
    "matrix": "indexing interactions",
    "rules": "mining association rules",
    "cosine_items": "item similarities",
    "cosine_users": "user similarities",
    "neumf": "training NeuMF",
    "write_questions": "writing questions",
    "write_dataset": "writing the dataset",
}


class BuildView:
    """A :class:`~recworld.lrworld.suite.BuildProgress` that draws and logs each event."""

    def __init__(self, *, enabled: bool) -> None:
        self._display = StageProgress(enabled=enabled, plain=True, label="build")
        self._measure: str | None = None

    def __enter__(self) -> BuildView:
        self._display.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._display.__exit__(kind, exc, tb)

    def loading(self, dataset: str) -> None:
        _log.info("loading dataset %s", dataset)
        self._display.overall(f"loading {dataset}", 0, None)

    def stage(self, name: str, started: bool) -> None:
        label = STAGE_LABELS.get(name, name)
        if started:
            _log.info("stage: %s", label)
            self._display.step(label)
        elif self._measure is not None:
            self._display.step(f"building {self._measure}")

    def measure(self, measure_id: str | None, done: int, total: int) -> None:
        self._measure = measure_id
        if measure_id is None:
            _log.info("built %d measures", total)
            self._display.overall("measures", done, total)
            return
        _log.info("measure %d/%d: %s", done + 1, total, measure_id)
        self._display.overall("measures", done, total)
        self._display.step(f"building {measure_id}")

    def epoch(self, epoch: int, epochs: int) -> None:
        self._display.step(f"training NeuMF (epoch {epoch})", epoch, epochs)
