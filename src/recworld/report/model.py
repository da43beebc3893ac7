"""The report as one computed object: every table, chart and note, before any file format.

:func:`build_report` scores, compares and draws once; :mod:`recworld.report.render`
turns the :class:`ReportModel` into Markdown, HTML and CSV. A new rendering
reads the model; a new number is computed here (or in a section builder) once,
and every rendering shows it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from recworld.errors import DataError
from recworld.report import charts, coverage
from recworld.report import diagnostics as diag
from recworld.report import tables as tbl
from recworld.report.analysis import AnalysisOptions, Section
from recworld.report.runs import RunData
from recworld.report.sections import build_sections
from recworld.report.viewer import viewer_data
from recworld.scoring import PairedRecord, paired_comparison

__all__ = ["DatasetSection", "PositionPanel", "ReportModel", "build_report", "by_dataset"]

TITLE = "RecWorld report: LRWorld results"


@dataclass
class DatasetSection:
    """One dataset's results: score tables, charts, and the notes to read before the numbers."""

    name: str
    slug: str
    runs: list[RunData]
    main: tbl.Table
    scales: tbl.Table
    factors: tbl.Table
    missed: tbl.Table
    errors: tbl.Table | None
    paired: tbl.Table | None
    bar_svg: str
    radar_svg: str | None
    notes: list[str]  # partial runs, small samples, skipped measures: read before the numbers
    viewer: str = ""  # JSON of the samples behind each main-table cell (report.html)


@dataclass(frozen=True)
class PositionPanel:
    """A position-bias table and its chart (None when no run answered that format)."""

    table: tbl.Table
    svg: str | None


@dataclass(frozen=True)
class ReportModel:
    """Everything a report shows, in reading order."""

    title: str
    subtitle: str
    runs: list[RunData]
    datasets: list[DatasetSection]
    positions: list[PositionPanel]
    analyses: list[Section]
    details: tbl.Table
    skipped: list[str]  # unfinished run folders, by name

    def runs_by_dataset(self) -> dict[str, list[RunData]]:
        return by_dataset(self.runs)


def by_dataset(runs: Sequence[RunData]) -> dict[str, list[RunData]]:
    out: dict[str, list[RunData]] = {}
    for run in runs:
        out.setdefault(run.dataset, []).append(run)
    return out


def _paired(dataset: str, runs: Sequence[RunData], seed: int) -> tbl.Table | None:
    if len(runs) < 2:
        return None
    reference = max(runs, key=lambda r: (r.metrics.overall.score if r.metrics.overall else None) or -1.0)
    others: list[tuple[RunData, PairedRecord]] = []
    for run in runs:
        if run is reference:
            continue
        try:
            others.append((run, paired_comparison(run.samples, reference.samples, seed=seed)))
        except DataError:  # no shared questions: not comparable, leave it out
            continue
    return diag.paired_table(dataset, reference, others) if others else None


def dataset_section(name: str, runs: list[RunData], seed: int) -> DatasetSection:
    """One dataset's tables and charts; averages and paired differences over the shared questions."""
    main = tbl.main_table(name, runs)
    measures = tbl.ordered_measures(runs)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-") or "dataset"
    # Averages and paired differences only over what every run answered (the per-measure table: all).
    shared, partial_note = coverage.comparable(runs)
    notes = [partial_note, coverage.small_sample_note(runs), coverage.skipped_measures_note(runs)]
    return DatasetSection(
        name=name,
        slug=slug,
        runs=runs,
        main=main,
        scales=tbl.scale_table(name, shared),
        factors=tbl.factor_table(name, shared),
        missed=diag.missed_table(name, runs),
        errors=diag.errors_table(name, runs),
        paired=_paired(name, shared, seed),
        bar_svg=charts.bar_chart(f"bar-{slug}", name, runs, measures),
        radar_svg=charts.radar_chart(f"radar-{slug}", name, shared),
        notes=[n for n in notes if n],
        viewer=viewer_data(main.key, runs, measures),
    )


def _subtitle(runs: Sequence[RunData]) -> str:
    models = sorted({r.model for r in runs})
    run_s = "s" if len(runs) != 1 else ""
    model_s = "s" if len(models) != 1 else ""
    return (
        f"{len(runs)} run{run_s} · {len(models)} model{model_s} · "
        f"datasets: {', '.join(by_dataset(runs))} · {sum(r.metrics.n for r in runs)} answered questions"
    )


def build_report(
    runs: list[RunData], skipped: Sequence[str], options: AnalysisOptions, *, paired_seed: int = 0
) -> ReportModel:
    """Compute every table, chart and analysis of the report over labelled, scored runs."""
    sections = [dataset_section(name, ds_runs, paired_seed) for name, ds_runs in by_dataset(runs).items()]
    positions = [
        PositionPanel(t, charts.position_chart(f"pos-{t.key}", t.key.removeprefix("positions-"), runs))
        for t in diag.position_tables(runs)
    ]
    return ReportModel(
        title=TITLE,
        subtitle=_subtitle(runs),
        runs=runs,
        datasets=sections,
        positions=positions,
        analyses=build_sections(runs, options),
        details=diag.details_table(runs),
        skipped=list(skipped),
    )
