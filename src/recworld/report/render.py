"""The renderings of a :class:`~recworld.report.model.ReportModel`: Markdown, HTML and two CSVs.

Each function reads the model only; none computes a number of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recworld import __version__
from recworld.csvsafe import csv_text
from recworld.report import tables as tbl
from recworld.report.model import ReportModel
from recworld.report.runs import RunData
from recworld.scoring import METRICS_SCHEMA

__all__ = ["LONG_COLUMNS", "METHOD", "long_csv", "to_html", "to_markdown", "wide_csv"]

LONG_COLUMNS = (
    "model",
    "mode",
    "variant",
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
)

METHOD = (
    "Each question has one correct option. Multiple-choice (MCQ) questions show 4 options and are scored by "
    "accuracy; HitRatio@1 questions show 1 positive among 10 candidates and score 1 when the model's single "
    "pick is the positive. The model's reply is parsed into an option; a reply from which no option can be "
    "read is a miss and counts as wrong. Intervals are 95% percentile bootstrap intervals over questions "
    "(1000 resamples, seeded); factor, scale and overall scores are macro averages over measures with "
    "intervals resampled within each measure. Paired differences resample the same questions for both "
    "models. Chance is 1/4 for MCQ and 1/10 for HitRatio@1."
)


def to_markdown(model: ReportModel) -> str:
    parts = [f"# {model.title}", "", model.subtitle, ""]
    if model.skipped:
        parts += [f"> Skipped unfinished runs (no samples.jsonl): {', '.join(model.skipped)}", ""]
    for ds in model.datasets:
        parts += [f"## LRWorld ({ds.name})", ""]
        parts += [f"> {note}\n" for note in ds.notes]
        parts += [tbl.render_markdown(t) for t in (ds.main, ds.scales, ds.factors, ds.missed)]
        parts += [tbl.render_markdown(t) for t in (ds.errors, ds.paired) if t is not None]
    parts += ["## Position bias", ""]
    parts += [tbl.render_markdown(panel.table) for panel in model.positions]
    for section in model.analyses:
        parts += [f"## {section.title}", "", section.note or section.intro, ""]
        parts += [tbl.render_markdown(t) for t in section.tables]
    parts += [tbl.render_markdown(model.details, level="##"), "## Method", "", METHOD, ""]
    return "\n".join(parts)


def to_html(model: ReportModel) -> str:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("recworld.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env.get_template("report.html.j2").render(
        title=model.title,
        subtitle=model.subtitle,
        datasets=model.datasets,
        positions=model.positions,
        details=model.details,
        skipped=model.skipped,
        analyses=model.analyses,
        method=METHOD,
        version=__version__,
        metrics_schema=METRICS_SCHEMA,
    )


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    return csv_text(rows)  # every cell formula-escaped (recworld.csvsafe)


def _num(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def long_csv(runs: Sequence[RunData]) -> str:
    """One row per run x measure (``LONG_COLUMNS``)."""
    rows: list[list[Any]] = [list(LONG_COLUMNS)]
    for run in runs:
        for measure, m in run.metrics.measures.items():
            rows.append(
                [
                    run.model,
                    run.mode,
                    run.variant,
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
                ]
            )
    return _csv(rows)


def wide_csv(by_dataset: dict[str, list[RunData]]) -> str:
    """One row per model (and a RANDOM row per dataset), one score column per measure."""
    measures = tbl.ordered_measures([r for runs in by_dataset.values() for r in runs])
    rows: list[list[Any]] = [["model", "mode", "variant", "dataset", *measures, "overall"]]
    for dataset, runs in by_dataset.items():
        chance: dict[str, float] = {}
        for run in runs:
            for k, v in run.metrics.measures.items():
                chance.setdefault(k, v.chance)
        overall_chance = sum(chance.values()) / len(chance) if chance else None
        rows.append(
            ["RANDOM", "", "", dataset, *[_num(chance.get(m)) for m in measures], _num(overall_chance)]
        )
        for run in runs:
            entries = run.metrics.measures
            scores = [_num(entries[m].score) if m in entries else "" for m in measures]
            overall = run.metrics.overall.score if run.metrics.overall else None
            rows.append([run.model, run.mode, run.variant, dataset, *scores, _num(overall)])
    return _csv(rows)
