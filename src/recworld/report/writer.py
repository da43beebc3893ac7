"""``write_report``: gather runs, score them, and write report.md, report.html and two CSVs."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld.io import atomic_write_text
from recworld.report import tables as tbl
from recworld.report.runs import RunData, gather_run_dirs, label_runs, load_run
from recworld.scoring import paired_comparison

__all__ = ["LONG_COLUMNS", "write_report"]

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
    paired: tbl.Table | None
    bar_svg: str
    radar_svg: str | None


def _by_dataset(runs: Sequence[RunData]) -> dict[str, list[RunData]]:
    out: dict[str, list[RunData]] = {}
    for run in runs:
        out.setdefault(run.dataset, []).append(run)
    return out


def _paired(dataset: str, runs: Sequence[RunData], seed: int) -> tbl.Table | None:
    if len(runs) < 2:
        return None
    reference = max(runs, key=lambda r: (r.metrics["overall"] or {}).get("score", -1.0))
    others = []
    for run in runs:
        if run is reference:
            continue
        try:
            others.append((run, paired_comparison(run.samples, reference.samples, seed=seed)))
        except Exception:  # no shared questions: not comparable, leave it out
            continue
    return tbl.paired_table(dataset, reference, others) if others else None


def _dataset_section(name: str, runs: list[RunData], seed: int) -> _Dataset:
    from recworld.report import charts

    main = tbl.main_table(name, runs)
    measures = tbl.ordered_measures(runs)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-") or "dataset"
    return _Dataset(
        name=name,
        slug=slug,
        runs=runs,
        main=main,
        scales=tbl.scale_table(name, runs),
        factors=tbl.factor_table(name, runs),
        missed=tbl.missed_table(name, runs),
        paired=_paired(name, runs, seed),
        bar_svg=charts.bar_chart(f"bar-{slug}", name, runs, measures),
        radar_svg=charts.radar_chart(f"radar-{slug}", name, runs),
    )


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows(rows)
    return buf.getvalue()


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
) -> str:
    parts = [f"# {title}", "", subtitle, ""]
    if skipped:
        parts += [f"> Skipped unfinished runs (no samples.jsonl): {', '.join(skipped)}", ""]
    for ds in sections:
        parts += [f"## LRWorld ({ds.name})", ""]
        parts.append(tbl.render_markdown(ds.main))
        parts.append(tbl.render_markdown(ds.scales))
        parts.append(tbl.render_markdown(ds.factors))
        parts.append(tbl.render_markdown(ds.missed))
        if ds.paired is not None:
            parts.append(tbl.render_markdown(ds.paired))
    parts += ["## Position bias", ""]
    parts += [tbl.render_markdown(t) for t in positions]
    parts += ["## Runs", "", tbl.render_markdown(details), "## Method", "", METHOD, ""]
    return "\n".join(parts)


def _html(
    title: str,
    subtitle: str,
    sections: Sequence[_Dataset],
    positions: Sequence[tuple[tbl.Table, str | None]],
    details: tbl.Table,
    skipped: Sequence[str],
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
        method=METHOD,
        version=__version__,
    )


def write_report(run_dirs: Sequence[Path], out_dir: Path, *, seed: int | None = None) -> dict[str, Path]:
    """Write ``report.md``, ``report.html``, ``metrics.csv`` and ``table.csv`` into ``out_dir``.

    ``run_dirs`` may name run directories or suites (a suite stands for all its
    finished runs). Each file is written atomically. Returns the written paths
    by kind: ``markdown``, ``html``, ``metrics_csv``, ``table_csv``. ``seed``
    None keeps each run's own bootstrap seed (from its ``metrics.json``).
    """
    from recworld.report import charts

    paths, skipped_paths = gather_run_dirs(list(run_dirs))
    runs = [load_run(p, seed=seed) for p in paths]
    label_runs(runs)
    by_dataset = _by_dataset(runs)
    paired_seed = 0 if seed is None else seed
    sections = [_dataset_section(name, ds_runs, paired_seed) for name, ds_runs in by_dataset.items()]
    position_tables = tbl.position_tables(runs)
    position_items = [
        (t, charts.position_chart(f"pos-{t.key}", t.key.removeprefix("positions-"), runs))
        for t in position_tables
    ]
    details = tbl.details_table(runs)
    skipped = [p.name for p in skipped_paths]
    models = sorted({r.model for r in runs})
    title = "RecWorld report: LRWorld results"
    plural = {"run": "s" if len(runs) != 1 else "", "model": "s" if len(models) != 1 else ""}
    subtitle = (
        f"{len(runs)} run{plural['run']} · {len(models)} model{plural['model']} · "
        f"datasets: {', '.join(by_dataset)} · {sum(r.metrics['n'] for r in runs)} answered questions"
    )
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {
        "markdown": out_dir / "report.md",
        "html": out_dir / "report.html",
        "metrics_csv": out_dir / "metrics.csv",
        "table_csv": out_dir / "table.csv",
    }
    atomic_write_text(
        written["markdown"], _markdown(title, subtitle, sections, position_tables, details, skipped)
    )
    atomic_write_text(written["html"], _html(title, subtitle, sections, position_items, details, skipped))
    atomic_write_text(written["metrics_csv"], long_csv(runs))
    atomic_write_text(written["table_csv"], wide_csv(by_dataset))
    return written
