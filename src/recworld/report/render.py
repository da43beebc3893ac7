"""The renderings of a :class:`~recworld.report.model.ReportModel`: Markdown, HTML and two CSVs.

Each function reads the model only; none computes a number of its own. Tables and
analysis sections are the report kit's types, and both documents are one list of
kit sections (:func:`page_sections`): report.md is the kit's
:func:`~recworld.reportkit.markdown.document_markdown` of it and report.html the
kit's ``document.html.j2``, as LUNAR's are, so LRWorld's report has no template
and no layout of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from recworld import __version__
from recworld.csvsafe import csv_text
from recworld.report import tables as tbl
from recworld.report.coverage import orders_of, role_of
from recworld.report.model import DatasetSection, ReportModel
from recworld.reportkit import Figure, Section
from recworld.reportkit.html import render_page
from recworld.reportkit.markdown import document_markdown
from recworld.scoring import METRICS_SCHEMA
from recworld.scoring.thresholds import DEGENERATE_TV, MIN_INTERVAL_N, MIN_PAIRED_N

__all__ = ["LONG_COLUMNS", "METHOD", "long_csv", "page_sections", "to_html", "to_markdown", "wide_csv"]

LONG_COLUMNS = (
    "run",
    "model",
    "mode",
    "variant",
    "settings",
    "dataset",
    "measure",
    "scale",
    "factor",
    "format",
    "n",
    "errors",
    "score",
    "ci_low",
    "ci_high",
    "missed_rate",
    "chance",
    "questions",
    "orders",
    "role",
    "coverage",
    "degenerate",
)

# table.csv's columns before one score column per measure (and "overall").
WIDE_LEAD = ("run", "model", "mode", "variant", "settings", "dataset", "role", "coverage", "questions")

METHOD = (
    "Each question has one correct option. Multiple-choice (MCQ) questions show 4 options and are scored by "
    "accuracy; HitRatio@1 questions show 1 positive among 10 candidates and score 1 when the model's single "
    "pick is the positive. The model's reply is parsed into an option; a reply from which no option can be "
    "read (an echoed option list included) is a miss and counts as wrong. A measure's interval is the exact "
    "Clopper-Pearson 95% interval over its questions (a run asked in several option orders resamples "
    "questions, not question x order copies); factor, scale and overall scores are macro averages over "
    "measures, with a stratified Clopper-Pearson interval (each measure's exact beta bounds, mixed with "
    "equal weights, so it never has zero width; a run asked in several option orders gets a stratified "
    "smoothed Bayesian bootstrap over its questions' mean hits instead). Averages compare only runs "
    "that asked the same questions; a partial run has its own tables. A cell under "
    f"{MIN_INTERVAL_N} questions shows its n instead of an interval. Paired differences use the questions "
    "both runs answered: an exact McNemar test per measure and a stratified sign-flip test over measures, "
    f"read only on at least {MIN_PAIRED_N} shared questions. A run is flagged for degenerate answering when "
    f"its parsed positions are more than {DEGENERATE_TV} in total variation from the answer key's and its "
    "top position is chosen significantly more often than the key puts answers there. Chance is 1/4 for "
    "MCQ and 1/10 for HitRatio@1. The oracle answers from the ground truth: a ceiling row, never bold, "
    "never the reference of a comparison."
)


def to_markdown(model: ReportModel) -> str:
    """The report as Markdown, from the sections report.html shows (:func:`page_sections`).

    Rendered by the kit (every text from data escaped: :mod:`recworld.mdsafe`, never raw
    HTML); tables are headed one level below their section, figures named by their captions.
    """
    return document_markdown(
        model.title,
        page_sections(model, clickable=False),
        lead=model.subtitle,
        notes=_skipped(model),
        method=METHOD,
        table_heading=None,
    )


def _skipped(model: ReportModel) -> list[str]:
    names = ", ".join(model.skipped)
    return [f"Skipped unfinished runs (no samples.jsonl): {names}"] if model.skipped else []


BAR_CAPTION = (
    "Bars: score per measure with exact 95% intervals, for the runs of the primary coverage group (partial "
    "runs and the oracle are in the table only). Dashed lines: chance (0.25 for 4-option MCQ, 0.10 for "
    "HitRatio@1 over 10 candidates)."
)
POSITION_CAPTION = (
    "Bars: where each model's parsed answers fall. Black steps: where the correct answers are. A model "
    "without position preference follows the steps."
)


def _aggregates(ds: DatasetSection) -> list[Section]:
    """One "Scales and factors" part per coverage group: its two tables, and the primary group's radar."""
    parts = []
    for panel in ds.aggregates:
        where = panel.group.describe()
        notes: list[str] = []
        figures: list[Figure] = []
        if not panel.group.primary:
            notes.append(f"Partial runs over {where}: compared only with each other, on these questions.")
        elif panel.radar_svg is not None:
            caption = (
                'Each model\'s "mental world": macro-averaged score on every factor with data, over '
                f"{where} (partial runs and the oracle are not drawn); dashed polygon is chance."
            )
            figures.append(Figure(f"radar-{ds.slug}", panel.radar_svg, caption))
        else:
            notes.append(f"Fewer than three factors have data for {ds.name}, so no radar chart is drawn.")
        title = "Scales and factors" if panel.group.primary else f"Scales and factors, partial: {where}"
        parts.append(
            Section(
                key=f"agg-{panel.scales.key}",
                title=title,
                notes=notes,
                tables=[panel.scales, panel.factors],
                figures=figures,
            )
        )
    return parts


def _dataset(ds: DatasetSection, clickable: bool) -> Section:
    click = ["Click a score to see the questions behind it."] if clickable else []
    missed = Section(
        key=f"missed-part-{ds.slug}",
        title="Missed answers",
        tables=[t for t in (ds.missed, ds.errors) if t is not None],
    )
    paired = []
    if ds.paired is not None:
        paired.append(Section(key=f"paired-part-{ds.slug}", title="Paired comparison", tables=[ds.paired]))
    return Section(
        key=f"ds-{ds.slug}",
        title=f"LRWorld ({ds.name})",
        notes=[*ds.notes, *click],
        tables=[ds.main],
        figures=[Figure(f"bar-{ds.slug}", ds.bar_svg, BAR_CAPTION)],
        subsections=[*_aggregates(ds), missed, *paired],
    )


def page_sections(model: ReportModel, *, clickable: bool = True) -> list[Section]:
    """The report as the kit's sections, in reading order: datasets, position bias, analyses, runs.

    Both report.html and report.md are these. An analysis's id is ``an-<key>`` (its table
    may share its key). ``clickable``: the page has the sample viewer, so say a score opens it.
    """
    positions = Section(
        key="positions",
        title="Position bias",
        tables=[panel.table for panel in model.positions],
        figures=[Figure(f"pos-{p.table.key}", p.svg, POSITION_CAPTION) for p in model.positions if p.svg],
    )
    return [
        *(_dataset(ds, clickable and bool(model.viewer)) for ds in model.datasets),
        positions,
        *(replace(a, key=f"an-{a.key}") for a in model.analyses),
        Section(key="runs", title="Runs", tables=[model.details]),
    ]


def to_html(model: ReportModel) -> str:
    return render_page(
        "document.html.j2",
        title=model.title,
        lead=model.subtitle,
        notes=_skipped(model),
        sections=page_sections(model),
        method=METHOD,
        viewer=model.viewer,
        footer=f"Generated by recworld report {__version__} · metrics schema {METRICS_SCHEMA}",
    )


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    return csv_text(rows)  # every cell formula-escaped (recworld.csvsafe)


def _num(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def long_csv(model: ReportModel) -> str:
    """One row per run x measure (``LONG_COLUMNS``): every run, main rows and the others."""
    coverage = {id(r): d.coverage_of(r) for d in model.datasets for r in d.runs}
    rows: list[list[Any]] = [list(LONG_COLUMNS)]
    for run in model.runs:
        role = role_of(run).value
        for measure, m in run.metrics.measures.items():
            rows.append(
                [
                    run.label,
                    run.model,
                    run.mode,
                    run.variant,
                    run.settings_line,
                    run.dataset,
                    measure,
                    m.scale,
                    m.factor,
                    m.format,
                    m.n,
                    m.errors,
                    _num(m.score),
                    _num(m.ci_low),
                    _num(m.ci_high),
                    _num(m.missed_rate),
                    _num(m.chance),
                    m.questions,
                    orders_of(run),
                    role,
                    coverage.get(id(run), ""),
                    "yes" if m.position_bias.degenerate else "",
                ]
            )
    return _csv(rows)


def wide_csv(model: ReportModel) -> str:
    """One row per main-table row (and a RANDOM row per dataset), one score column per measure.

    The rows, their coverage and their ``overall`` are the report's own: ``overall``
    is the all-measures average of the run's coverage group table.
    """
    measures = tbl.ordered_measures([r for d in model.datasets for r in d.runs])
    rows: list[list[Any]] = [[*WIDE_LEAD, *measures, "overall"]]
    for ds in model.datasets:
        chance: dict[str, float] = {}
        for run in ds.runs:
            for k, v in run.metrics.measures.items():
                chance.setdefault(k, v.chance)
        overall_chance = sum(chance.values()) / len(chance) if chance else None
        rows.append(
            [
                "RANDOM",
                "RANDOM",
                "",
                "",
                "",
                ds.name,
                "chance",
                "",
                "",
                *[_num(chance.get(m)) for m in measures],
                _num(overall_chance),
            ]
        )
        for row in ds.rows:
            run = row.run
            entries = run.metrics.measures
            scores = [_num(entries[m].score) if m in entries else "" for m in measures]
            overall = run.metrics.overall.score if run.metrics.overall else None
            questions = sum(e.questions for e in entries.values())
            rows.append(
                [
                    row.text,
                    run.model,
                    run.mode,
                    run.variant,
                    run.settings_line,
                    ds.name,
                    role_of(run).value,
                    ds.coverage_of(run),
                    questions,
                    *scores,
                    _num(overall),
                ]
            )
    return _csv(rows)
