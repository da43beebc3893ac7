"""The LUNAR report: models × contexts (PC, PD, Avg with bootstrap CIs) plus quality figures.

Writes ``DIR/report.md``, ``DIR/report.csv`` and ``DIR/quality.json`` atomically.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from recworld.io import atomic_write_json, atomic_write_text
from recworld.lunar import store
from recworld.lunar.judge import Judgment
from recworld.lunar.outputs import EvalRun, read_record
from recworld.lunar.quality import affinity_entropy, cross_week_cosine, fidelity
from recworld.lunar.report_ablation import ablation_section
from recworld.lunar.report_privacy import privacy_section
from recworld.lunar.report_quality import html_page, quality_section, synthetic_counts
from recworld.lunar.report_quality import render_html as validation_html
from recworld.lunar.report_quality import render_markdown as validation_markdown
from recworld.scoring import bootstrap_ci as shared_bootstrap_ci
from recworld.seeding import rng

METRICS = ("pc", "pd", "avg")


def bootstrap_ci(values: Sequence[float], *, seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean (the shared recworld.scoring helper)."""
    return shared_bootstrap_ci(values, rng(seed, "lunar", "bootstrap"))


def score_rows(root: Path, seed: int = 0) -> list[dict[str, Any]]:
    """One row per (model, context): means over judged answers only, with every error counted beside them."""
    rows = []
    for run_path in sorted((root / "eval").glob("*/*/run.json")):
        run = read_record(run_path, EvalRun)
        judged = [
            j for j in store.read_jsonl(run_path.parent / "judgments.jsonl", Judgment) if j.error is None
        ]
        row: dict[str, Any] = {
            "model": run.model,
            "context": run.context,
            "judge": run.judge,
            "n": run.counts.queries,
            "judged": len(judged),
            "answer_errors": run.counts.answer_errors,
            "judge_errors": run.counts.judge_errors,
        }
        for metric in METRICS:
            values = [float(getattr(j, metric)) for j in judged]
            ci = bootstrap_ci(values, seed=seed)
            row[metric] = float(np.mean(values)) if values else None
            row[f"{metric}_low"], row[f"{metric}_high"] = ci if ci is not None else (None, None)
        rows.append(row)
    order = {"none": 0, "full": 1, "curated": 2, "rag": 3, "memory": 4}
    return sorted(rows, key=lambda r: (r["model"], order.get(r["context"], 9)))


def quality_figures(root: Path, baseline: Path | None = None) -> dict[str, Any]:
    profiles = store.profiles(root)
    trajectories = store.trajectories(root)
    records = store.records(root)
    real = store.real_stats(root).counts()
    anchors_on = store.manifest(root).config.options.use_anchors
    starts = {t.user_id: t.start_ts for t in trajectories}
    out: dict[str, Any] = {
        "cross_week_cosine": cross_week_cosine(records, starts),
        "affinity_entropy": affinity_entropy(profiles),
        "jsd": {
            ("with_anchors" if anchors_on else "without_anchors"): fidelity(synthetic_counts(root), real)
        },
        "consistency": [w.consistency.combined for t in trajectories for w in t.weeks],
    }
    if baseline is not None:
        base_on = store.manifest(baseline).config.options.use_anchors
        label = "with_anchors" if base_on else "without_anchors"
        if label in out["jsd"]:
            label += "_baseline"
        out["jsd"][label] = fidelity(synthetic_counts(baseline), real)
    return out


def _fmt(row: dict[str, Any], metric: str) -> str:
    if row[metric] is None:
        return "–"
    return f"{row[metric]:.2f} [{row[f'{metric}_low']:.2f}, {row[f'{metric}_high']:.2f}]"


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def render_markdown(rows: Sequence[dict[str, Any]], quality: dict[str, Any]) -> str:
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
        scores = " | ".join(_fmt(r, m) for m in METRICS)
        errors = f"{r['answer_errors']} | {r['judge_errors']}"
        lines.append(f"| {r['model']} | {r['context']} | {r['judged']} / {r['n']} | {errors} | {scores} |")
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


def render_csv(rows: Sequence[dict[str, Any]]) -> str:
    columns = ["model", "context", "judge", "n", "judged", "answer_errors", "judge_errors"] + [
        f"{m}{s}" for m in METRICS for s in ("", "_low", "_high")
    ]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})
    return buffer.getvalue()


def write_report(
    root: Path,
    *,
    baseline: Path | None = None,
    seed: int = 0,
    reference: str | None = None,
    reference_timezone: str | None = None,
) -> dict[str, Any]:
    rows = score_rows(root, seed)
    quality = quality_figures(root, baseline)
    quality["validation"] = quality_section(root, reference, reference_timezone)
    privacy_md, privacy_html = privacy_section(root)
    ablation_md, ablation_html = ablation_section(root)
    markdown = render_markdown(rows, quality) + validation_markdown(quality["validation"]) + privacy_md
    markdown += ablation_md
    atomic_write_text(root / "report.md", markdown)
    sections = [validation_html(quality["validation"]), privacy_html, ablation_html]
    atomic_write_text(root / "report.html", html_page(markdown, sections))
    atomic_write_text(root / "report.csv", render_csv(rows))
    atomic_write_json(root / "quality.json", quality)
    return {"rows": rows, "quality": quality}
