"""The report as one computed object: every table, chart and note, before any file format.

:func:`build_report` scores, compares and draws once; :mod:`recworld.report.render`
turns the :class:`ReportModel` into Markdown, HTML and CSV. A new rendering
reads the model; a new number is computed here (or in a section builder) once,
and every rendering shows it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from recworld.errors import DataError
from recworld.paths import slug, unique_slugs
from recworld.report import charts, coverage
from recworld.report import diagnostics as diag
from recworld.report import score_tables as st
from recworld.report import tables as tbl
from recworld.report.analysis import AnalysisOptions
from recworld.report.coverage import CoverageGroup, Role, role_of
from recworld.report.runs import RunData, common_settings
from recworld.report.sections import build_sections
from recworld.report.viewer import add_views, new_viewer
from recworld.reportkit import Section, Table
from recworld.reportkit.viewer import Viewer
from recworld.scoring import PairedRecord, paired_comparison

__all__ = [
    "AggregatePanel",
    "DatasetSection",
    "PositionPanel",
    "ReportModel",
    "Step",
    "build_report",
    "by_dataset",
    "report_steps",
]

TITLE = "RecWorld report: LRWorld results"


@dataclass(frozen=True)
class AggregatePanel:
    """The scale and factor averages of one coverage group: runs that asked the same questions."""

    group: CoverageGroup
    scales: Table
    factors: Table
    radar_svg: str | None  # the primary group only (None: fewer than three factors, or a partial group)


@dataclass
class DatasetSection:
    """One dataset's results: score tables, charts, and the notes to read before the numbers."""

    name: str
    slug: str
    rows: list[st.ScoreRow]  # the main table's rows: zero-shot runs in one order, the oracle as a ceiling
    groups: list[CoverageGroup]  # the rows' runs by the questions they asked; the primary group first
    main: Table
    aggregates: list[AggregatePanel]
    missed: Table
    errors: Table | None
    paired: Table | None
    bar_svg: str
    notes: list[str]  # partial runs, small samples, degenerate answering, skipped measures

    @property
    def runs(self) -> list[RunData]:
        return [row.run for row in self.rows]

    def coverage_of(self, run: RunData) -> str:
        """``full`` (in the primary group) or ``partial``."""
        return "partial" if coverage.is_partial(run, self.groups) else "full"

    @property
    def radar_svg(self) -> str | None:
        return self.aggregates[0].radar_svg if self.aggregates else None


@dataclass(frozen=True)
class PositionPanel:
    """A position-bias table and its chart (None when no run answered that format)."""

    table: Table
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
    details: Table
    skipped: list[str]  # unfinished run folders, by name
    viewer: Viewer  # the samples behind each main-table score cell (report.html)

    def runs_by_dataset(self) -> dict[str, list[RunData]]:
        return by_dataset(self.runs)


def by_dataset(runs: Sequence[RunData]) -> dict[str, list[RunData]]:
    out: dict[str, list[RunData]] = {}
    for run in runs:
        out.setdefault(run.dataset, []).append(run)
    return out


def _overall(run: RunData) -> float:
    overall = run.metrics.overall
    return -1.0 if overall is None or overall.score is None else overall.score


def _paired(
    dataset: str, key: str, rows: Sequence[st.ScoreRow], groups: Sequence[CoverageGroup], seed: int
) -> Table | None:
    """Every competitor against the best run of the primary group, each pair on the questions it shares."""
    competitors = [row.run for row in rows if not row.ceiling]
    primary = [r for r in competitors if groups and groups[0].has(r)]
    if len(competitors) < 2 or not primary:
        return None
    reference = max(primary, key=_overall)
    others: list[tuple[RunData, PairedRecord]] = []
    for run in competitors:
        if run is reference:
            continue
        try:
            others.append((run, paired_comparison(run.samples, reference.samples, seed=seed)))
        except DataError:  # no shared questions: not comparable, leave it out
            continue
    return diag.paired_table(dataset, key, reference, others) if others else None


def _rows(groups: Sequence[CoverageGroup]) -> list[st.ScoreRow]:
    """Ceiling rows first (beside RANDOM), then the primary group's runs, then each partial group's."""
    rows = [
        st.ScoreRow(
            run,
            run.label if group.primary else f"{run.label} (partial: {group.describe()})",
            role_of(run) is Role.CEILING,
        )
        for group in groups
        for run in group.runs
    ]
    return [r for r in rows if r.ceiling] + [r for r in rows if not r.ceiling]


def _bars(rows: Sequence[st.ScoreRow], groups: Sequence[CoverageGroup]) -> list[RunData]:
    """The bar chart's runs: the primary group's competitors (a partial run's n=2 bars would shout)."""
    return [r.run for r in rows if not r.ceiling and groups and groups[0].has(r.run)]


def _aggregates(
    name: str, ds_key: str, rows: Sequence[st.ScoreRow], groups: Sequence[CoverageGroup]
) -> list[AggregatePanel]:
    panels = []
    for i, group in enumerate(groups):
        members = [row for row in rows if group.has(row.run)]
        key = ds_key if group.primary else f"{ds_key}-partial-{i}"
        title = name if group.primary else f"{name}, partial: {group.describe()}"
        radar = None
        if group.primary:
            radar = charts.radar_chart(f"radar-{ds_key}", name, [r.run for r in members if not r.ceiling])
        panels.append(
            AggregatePanel(
                group,
                st.scale_table(key, title, group.describe(), members),
                st.factor_table(key, title, group.describe(), members),
                radar,
            )
        )
    return panels


def dataset_section(
    name: str, runs: list[RunData], seed: int, viewer: Viewer | None = None, *, key: str | None = None
) -> DatasetSection:
    """One dataset's main-table runs: per-measure scores, averages per coverage group, paired differences.

    ``viewer`` gets the samples behind each main-table score cell. ``key`` prefixes every id of
    the section, its tables and charts: the dataset's slug, unique among the page's datasets
    (:func:`recworld.paths.unique_slugs`; alone, :func:`~recworld.paths.slug` of ``name``).
    """
    key = slug(name) if key is None else key
    groups = coverage.coverage_groups(runs)
    rows = _rows(groups)
    measures = tbl.ordered_measures(runs)
    ordered = [row.run for row in rows]
    main = add_views(
        new_viewer() if viewer is None else viewer, st.main_table(name, key, rows), ordered, measures
    )
    notes = [
        coverage.partial_note(groups),
        coverage.small_sample_note(runs),
        coverage.degenerate_note([r.run for r in rows if not r.ceiling]),
        coverage.skipped_measures_note(runs),
    ]
    return DatasetSection(
        name=name,
        slug=key,
        rows=rows,
        groups=groups,
        main=main,
        aggregates=_aggregates(name, key, rows, groups),
        missed=diag.missed_table(name, key, ordered),
        errors=diag.errors_table(name, key, ordered),
        paired=_paired(name, key, rows, groups, seed),
        bar_svg=charts.bar_chart(f"bar-{key}", name, _bars(rows, groups) or ordered, measures),
        notes=[n for n in notes if n],
    )


def _elsewhere_note(runs: Sequence[RunData], main: Sequence[RunData]) -> str | None:
    rest = [r for r in runs if not any(r is m for m in main)]
    if not rest:
        return None
    kinds = [
        (sum(role_of(r) is Role.VARIANT for r in rest), "prompt-variant", "Prompt variants"),
        (sum(role_of(r) is Role.ORDERS for r in rest), "option-order", "Option orders"),
    ]
    present = [(n, kind, section) for n, kind, section in kinds if n]
    what = " and ".join(f"{n} {kind} run{'s' if n != 1 else ''}" for n, kind, _ in present)
    where = ", ".join(section for _, _, section in present)
    return f"{what} are not rows of the tables below: they have their own sections ({where})."


def _subtitle(runs: Sequence[RunData]) -> str:
    models = sorted({r.model for r in runs})
    run_s = "s" if len(runs) != 1 else ""
    model_s = "s" if len(models) != 1 else ""
    shared = common_settings(runs)  # settings every run has, so no row label names them
    return (
        f"{len(runs)} run{run_s} · {len(models)} model{model_s} · "
        f"datasets: {', '.join(by_dataset(runs))} · {sum(r.metrics.n for r in runs)} answered questions"
    ) + (f" · every run: {shared}" if shared else "")


# Hears each step of the report's computation: what it is now doing.
Step = Callable[[str], None]


def report_steps(runs: Sequence[RunData]) -> int:
    """How many times :func:`build_report` calls its ``step`` over ``runs``: a progress total."""
    from recworld.report.sections import SECTIONS

    return len(by_dataset(coverage.main_runs(runs))) + 1 + len(SECTIONS)


def build_report(
    runs: list[RunData],
    skipped: Sequence[str],
    options: AnalysisOptions,
    *,
    paired_seed: int = 0,
    step: Step | None = None,
) -> ReportModel:
    """Compute every table, chart and analysis of the report over labelled, scored runs.

    ``step`` hears each stage (a dataset's tables and charts, the position
    charts, each analysis): :func:`report_steps` calls in all.
    """
    tell: Step = step or (lambda _what: None)
    main = coverage.main_runs(runs)
    viewer = new_viewer()
    sections = []
    datasets = by_dataset(main)
    keys = unique_slugs(datasets)
    for name, ds_runs in datasets.items():
        tell(f"tables and charts of {name}")
        sections.append(dataset_section(name, ds_runs, paired_seed, viewer, key=keys[name]))
    elsewhere = _elsewhere_note(runs, main)
    for section in sections[:1]:
        if elsewhere:
            section.notes.insert(0, elsewhere)
    competing = [r for r in main if role_of(r) is not Role.CEILING] or main
    tell("position charts")
    positions = [
        PositionPanel(t, charts.position_chart(f"pos-{t.key}", t.key.removeprefix("positions-"), competing))
        for t in diag.position_tables(competing)
    ]
    return ReportModel(
        title=TITLE,
        subtitle=_subtitle(runs),
        runs=runs,
        datasets=sections,
        positions=positions,
        analyses=build_sections(runs, options, progress=lambda name: tell(f"analysis: {name}")),
        details=diag.details_table(runs, {id(r): d.coverage_of(r) for d in sections for r in d.runs}),
        skipped=list(skipped),
        viewer=viewer,
    )
