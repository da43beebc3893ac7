"""``write_files``: compute the report once (:func:`.model.build_report`), then write its files.

Writes ``DIR/report.html`` (tables, SVG figures, the sample viewer), ``DIR/report.md``,
``DIR/report.csv`` (the personalisation rows), ``DIR/privacy.csv`` (Figure 4's points)
and ``DIR/quality.json``, each atomically. The library call is
:func:`recworld.lunar.write_lunar_report`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld.csvsafe import csv_text
from recworld.io import atomic_write_json, atomic_write_text
from recworld.lunar.config import ReportConfig
from recworld.lunar.report.model import build_report
from recworld.lunar.report.privacy import ModelPoint, pareto_front
from recworld.lunar.report.render import to_html, to_markdown
from recworld.lunar.report.scores import ScoreRow, render_csv

__all__ = ["PRIVACY_COLUMNS", "ReportResult", "privacy_csv", "write_files"]

FILES = ("report.html", "report.md", "report.csv", "privacy.csv", "quality.json")
PRIVACY_COLUMNS = [
    "model",
    "context",
    "personalisation",
    "personalisation_low",
    "personalisation_high",
    "personalisation_n",
    "privacy",
    "privacy_low",
    "privacy_high",
    "privacy_n",
    "offended",
    "region",
    "pareto",
]


@dataclass(frozen=True)
class ReportResult:
    """What :func:`recworld.lunar.write_lunar_report` wrote: the rows, the figure's points, quality.json."""

    rows: list[ScoreRow]
    points: list[ModelPoint]
    quality: dict[str, Any]  # quality.json as written (figures keyed like the file)
    written: list[Path]


def privacy_csv(points: Sequence[ModelPoint]) -> str:
    """privacy.csv: Figure 4's points, one per model, as the HTML table shows them."""
    front = {p.model for p in pareto_front(points)}
    rows = [
        [
            p.model,
            p.context,
            p.personalisation.mean,
            p.personalisation.low,
            p.personalisation.high,
            p.personalisation.n,
            p.privacy.mean,
            p.privacy.low,
            p.privacy.high,
            p.privacy.n,
            p.offended.k,
            p.region,
            p.model in front,
        ]
        for p in points
    ]
    return csv_text([PRIVACY_COLUMNS, *rows])


OnStep = Callable[[str, int, int], None]  # (what runs now, steps done, steps in all)
STEPS = 4  # read and score the runs, render the HTML, render the rest, write the files


def write_files(config: ReportConfig, on_step: OnStep | None = None) -> ReportResult:
    """Write report.html / report.md / report.csv / privacy.csv / quality.json for ``config.root``.

    ``on_step`` hears each of the :data:`STEPS` steps as it starts (a progress display).
    """
    step = on_step or (lambda what, done, total: None)
    root = config.root
    step("reading and scoring the runs", 0, STEPS)
    report = build_report(config)
    step("rendering report.html", 1, STEPS)
    html = to_html(report)
    step("rendering report.md and the CSVs", 2, STEPS)
    texts = (html, to_markdown(report), render_csv(report.rows), privacy_csv(report.points))
    step("writing the files", 3, STEPS)
    for name, text in zip(FILES, texts, strict=False):
        atomic_write_text(root / name, text)
    atomic_write_json(root / "quality.json", report.quality)
    step("done", STEPS, STEPS)
    return ReportResult(
        rows=report.rows,
        points=report.points,
        quality=report.quality,
        written=[root / name for name in FILES],
    )
