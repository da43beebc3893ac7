"""The LUNAR report: models × contexts (PC, PD, Avg with bootstrap CIs) plus quality figures and sections.

Writes ``DIR/report.md``, ``DIR/report.html``, ``DIR/report.csv`` and ``DIR/quality.json``
atomically. Named apart from LRWorld's ``recworld.report.write_report`` on purpose: the
library call is :func:`recworld.lunar.build_report`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from recworld.io import atomic_write_json, atomic_write_text
from recworld.lunar.config import ReportConfig
from recworld.lunar.quality.stats import affinity_entropy, cross_week_cosine, fidelity
from recworld.lunar.report import validation
from recworld.lunar.report.ablation import ablation_section
from recworld.lunar.report.page import html_page
from recworld.lunar.report.privacy import privacy_section
from recworld.lunar.report.scores import METRICS, MetricCell, ScoreRow, render_csv, score_rows
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import RealStats, SynthManifest
from recworld.mdsafe import md_cell


@dataclass(frozen=True)
class ReportResult:
    """What :func:`recworld.lunar.build_report` wrote: the score rows and the quality.json document."""

    rows: list[ScoreRow]
    quality: dict[str, Any]  # quality.json as written (figures keyed like the file)


def quality_figures(root: Path, baseline: Path | None = None) -> dict[str, Any]:
    """The statistical figures of quality.json: stability, diversity, JSD to real data, week consistency."""
    profiles = store.profiles(root)
    trajectories = store.trajectories(root)
    records = store.records(root)
    real = RealStats.of(root).counts()
    anchors_on = SynthManifest.of(root).config.options.use_anchors
    starts = {t.user_id: t.start_ts for t in trajectories}
    out: dict[str, Any] = {
        "cross_week_cosine": cross_week_cosine(records, starts),
        "affinity_entropy": affinity_entropy(profiles),
        "jsd": {
            ("with_anchors" if anchors_on else "without_anchors"): fidelity(
                validation.synthetic_counts(root), real
            )
        },
        "consistency": [w.consistency.combined for t in trajectories for w in t.weeks],
    }
    if baseline is not None:
        base_on = SynthManifest.of(baseline).config.options.use_anchors
        label = "with_anchors" if base_on else "without_anchors"
        if label in out["jsd"]:
            label += "_baseline"
        out["jsd"][label] = fidelity(validation.synthetic_counts(baseline), real)
    return out


def _fmt(cell: MetricCell) -> str:
    if cell.mean is None:
        return "–"
    return f"{cell.mean:.2f} [{cell.low:.2f}, {cell.high:.2f}]"


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def render_markdown(rows: Sequence[ScoreRow], quality: dict[str, Any]) -> str:
    lines = [
        "# LUNAR report",
        "",
        "## Personalisation (pairwise vs the generic answer; mean [95% bootstrap CI])",
        "",
        "A failed answer scores 1 on PC and PD (the scale's floor: wrong or missing) and is counted",
        "in answer errors; a failed judgment is counted in judge errors and never scored.",
        "",
    ]
    lines += [
        "| model | context | judged / n | answer errors | judge errors | PC | PD | Avg |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        scores = " | ".join(_fmt(r.cell(m)) for m in METRICS)
        errors = f"{r.answer_errors} | {r.judge_errors}"
        lines.append(
            f"| {md_cell(r.model)} | {md_cell(r.context)} | {r.judged} / {r.n} | {errors} | {scores} |"
        )
    if not rows:
        lines.append("| (no evaluations yet) | | | | | | | |")
    cw, ent = quality["cross_week_cosine"], quality["affinity_entropy"]
    lines += ["", "## Data quality (statistical)", "", "| figure | value |", "| --- | --- |"]
    lines.append(f"| cross-week cosine, all pairs | {_num(cw['all_pairs'])} |")
    lines.append(f"| cross-week cosine, consecutive weeks | {_num(cw['consecutive'])} |")
    lines.append(f"| normalised affinity entropy (weighted) | {_num(ent['weighted'])} |")
    for label, jsd in sorted(quality["jsd"].items()):
        for dim in ("type", "hour", "weekday"):
            lines.append(f"| JSD {dim} vs real ({label.replace('_', ' ')}) | {_num(jsd[dim])} |")
    combined = [c for c in quality["consistency"] if c is not None]
    lines.append(f"| mean week consistency (0–1) | {_num(float(np.mean(combined)) if combined else None)} |")
    return "\n".join(lines) + "\n"


def write_lunar_report(config: ReportConfig) -> ReportResult:
    """Write report.md / report.html / report.csv / quality.json for ``config.root``."""
    root = config.root
    rows = score_rows(root, config.seed)
    quality = quality_figures(root, config.baseline)
    domain_map = config.domain_map or SynthManifest.of(root).config.domain_map
    section = validation.quality_section(root, config.reference, config.reference_timezone, domain_map)
    quality["validation"] = section.to_json()
    privacy_md, privacy_html = privacy_section(root)
    ablation_md, ablation_html = ablation_section(root)
    markdown = render_markdown(rows, quality) + validation.render_markdown(section) + privacy_md
    markdown += ablation_md
    atomic_write_text(root / "report.md", markdown)
    sections = [validation.render_html(section), privacy_html, ablation_html]
    atomic_write_text(root / "report.html", html_page(markdown, sections))
    atomic_write_text(root / "report.csv", render_csv(rows))
    atomic_write_json(root / "quality.json", quality)
    return ReportResult(rows=rows, quality=quality)
