"""``write_report``: gather runs, score them, and write report.md, report.html and two CSVs."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld.csvsafe import csv_text
from recworld.io import atomic_write_text, claim_output_dir, mark_output_dir
from recworld.report import coverage
from recworld.report import diagnostics as diag
from recworld.report import tables as tbl
from recworld.report.runs import RunData, gather_run_dirs, label_runs, load_run
from recworld.report.sections import AnalysisOptions, Section, build_sections
from recworld.scoring import paired_comparison

__all__ = ["LONG_COLUMNS", "write_report"]

_log = logging.getLogger(__name__)

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


@dataclass
class _Dataset:
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


def _by_dataset(runs: Sequence[RunData]) -> dict[str, list[RunData]]:
    out: dict[str, list[RunData]] = {}
    for run in runs:
        out.setdefault(run.dataset, []).append(run)
    return out


def _paired(dataset: str, runs: Sequence[RunData], seed: int) -> tbl.Table | None:
    if len(runs) < 2:
        return None
    reference = max(runs, key=lambda r: (r.metrics["overall"] or {}).get("score") or -1.0)
    others = []
    for run in runs:
        if run is reference:
            continue
        try:
            others.append((run, paired_comparison(run.samples, reference.samples, seed=seed)))
        except Exception:  # no shared questions: not comparable, leave it out
            continue
    return diag.paired_table(dataset, reference, others) if others else None


def _dataset_section(name: str, runs: list[RunData], seed: int) -> _Dataset:
    from recworld.report import charts
    from recworld.report.viewer import viewer_data

    main = tbl.main_table(name, runs)
    measures = tbl.ordered_measures(runs)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-") or "dataset"
    # Averages and paired differences only over what every run answered (the per-measure table: all).
    shared, partial_note = coverage.comparable(runs)
    notes = [partial_note, coverage.small_sample_note(runs), coverage.skipped_measures_note(runs)]
    return _Dataset(
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


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    return csv_text(rows)  # every cell formula-escaped (recworld.csvsafe)


def _num(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def long_csv(runs: Sequence[RunData]) -> str:
    rows: list[list[Any]] = [list(LONG_COLUMNS)]
    for run in runs:
        for measure, m in run.metrics["measures"].items():
            rows.append(
                [
                    run.model,
                    run.mode,
                    run.variant,
                    run.dataset,
                    measure,
                    m["scale"],
                    m["factor"],
                    m["format"],
                    m["n"],
                    m["errors"],
                    _num(m["score"]),
                    _num(m["ci_low"]),
                    _num(m["ci_high"]),
                    _num(m["missed_rate"]),
                    _num(m["chance"]),
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
            for k, v in run.metrics["measures"].items():
                chance.setdefault(k, v["chance"])
        overall_chance = sum(chance.values()) / len(chance) if chance else None
        rows.append(
            ["RANDOM", "", "", dataset, *[_num(chance.get(m)) for m in measures], _num(overall_chance)]
        )
        for run in runs:
            scores = [
                _num(run.metrics["measures"][m]["score"]) if m in run.metrics["measures"] else ""
                for m in measures
            ]
            overall = run.metrics["overall"]["score"] if run.metrics["overall"] else None
            rows.append([run.model, run.mode, run.variant, dataset, *scores, _num(overall)])
    return _csv(rows)


def _markdown(
    title: str,
    subtitle: str,
    sections: Sequence[_Dataset],
    positions: Sequence[tbl.Table],
    details: tbl.Table,
    skipped: Sequence[str],
    analyses: Sequence[Section] = (),
) -> str:
    parts = [f"# {title}", "", subtitle, ""]
    if skipped:
        parts += [f"> Skipped unfinished runs (no samples.jsonl): {', '.join(skipped)}", ""]
    for ds in sections:
        parts += [f"## LRWorld ({ds.name})", ""]
        parts += [f"> {note}\n" for note in ds.notes]
        parts.append(tbl.render_markdown(ds.main))
        parts.append(tbl.render_markdown(ds.scales))
        parts.append(tbl.render_markdown(ds.factors))
        parts.append(tbl.render_markdown(ds.missed))
        if ds.errors is not None:
            parts.append(tbl.render_markdown(ds.errors))
        if ds.paired is not None:
            parts.append(tbl.render_markdown(ds.paired))
    parts += ["## Position bias", ""]
    parts += [tbl.render_markdown(t) for t in positions]
    for section in analyses:
        parts += [f"## {section.title}", "", section.note or section.intro, ""]
        parts += [tbl.render_markdown(t) for t in section.tables]
    parts += [tbl.render_markdown(details, level="##"), "## Method", "", METHOD, ""]
    return "\n".join(parts)


def _html(
    title: str,
    subtitle: str,
    sections: Sequence[_Dataset],
    positions: Sequence[tuple[tbl.Table, str | None]],
    details: tbl.Table,
    skipped: Sequence[str],
    analyses: Sequence[Section] = (),
) -> str:
    import jinja2

    from recworld import __version__

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("recworld.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env.get_template("report.html.j2").render(
        title=title,
        subtitle=subtitle,
        datasets=sections,
        positions=[{"table": t, "svg": svg} for t, svg in positions],
        details=details,
        skipped=skipped,
        analyses=analyses,
        method=METHOD,
        version=__version__,
    )


REPORT_KIND = "report"


def _claim(out_dir: Path) -> Path:
    """A report goes into a new or empty folder, an earlier report's, or a run folder (its own report).

    Anything else is refused (:func:`recworld.io.claim_output_dir`): a report never
    overwrites files in a folder recworld did not write.
    """

    def earlier(path: Path) -> bool:
        return (path / "report.md").is_file() or (path / "run.json").is_file()

    return claim_output_dir(out_dir, REPORT_KIND, recognise=earlier)


def write_report(
    run_dirs: Sequence[Path],
    out_dir: Path,
    *,
    seed: int | None = None,
    options: AnalysisOptions | None = None,
) -> dict[str, Path]:
    """Write ``report.md``, ``report.html``, ``metrics.csv`` and ``table.csv`` into ``out_dir``.

    ``run_dirs`` may name run directories or suites (a suite stands for all its
    finished runs). Each file is written atomically. Returns the written paths
    by kind: ``markdown``, ``html``, ``metrics_csv``, ``table_csv``. ``seed``
    None keeps each run's own bootstrap seed (from its ``metrics.json``).
    """
    from recworld.report import charts

    out_dir = _claim(Path(out_dir))
    paths, skipped_paths = gather_run_dirs(list(run_dirs))
    runs = [load_run(p, seed=seed) for p in paths]
    label_runs(runs)
    by_dataset = _by_dataset(runs)
    paired_seed = 0 if seed is None else seed
    sections = [_dataset_section(name, ds_runs, paired_seed) for name, ds_runs in by_dataset.items()]
    position_tables = diag.position_tables(runs)
    position_items = [
        (t, charts.position_chart(f"pos-{t.key}", t.key.removeprefix("positions-"), runs))
        for t in position_tables
    ]
    details = diag.details_table(runs)
    analyses = build_sections(runs, options or AnalysisOptions())
    skipped = [p.name for p in skipped_paths]
    if skipped_paths:
        _log.warning(
            "skipped unfinished runs (no samples.jsonl): %s", ", ".join(str(p) for p in skipped_paths)
        )
    models = sorted({r.model for r in runs})
    title = "RecWorld report: LRWorld results"
    plural = {"run": "s" if len(runs) != 1 else "", "model": "s" if len(models) != 1 else ""}
    subtitle = (
        f"{len(runs)} run{plural['run']} · {len(models)} model{plural['model']} · "
        f"datasets: {', '.join(by_dataset)} · {sum(r.metrics['n'] for r in runs)} answered questions"
    )
    if not (out_dir / "run.json").is_file():  # a single run's report lives in its run folder, unmarked
        mark_output_dir(out_dir, REPORT_KIND)
    written = {
        "markdown": out_dir / "report.md",
        "html": out_dir / "report.html",
        "metrics_csv": out_dir / "metrics.csv",
        "table_csv": out_dir / "table.csv",
    }
    atomic_write_text(
        written["markdown"], _markdown(title, subtitle, sections, position_tables, details, skipped, analyses)
    )
    atomic_write_text(
        written["html"],
        _html(title, subtitle, sections, position_items, details, skipped, analyses),
    )
    atomic_write_text(written["metrics_csv"], long_csv(runs))
    atomic_write_text(written["table_csv"], wide_csv(by_dataset))
    return written
