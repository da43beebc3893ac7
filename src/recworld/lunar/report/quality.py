"""The data-quality section: statistical figures, JSD to real data (Table 3), LLM ratings, agreement.

:func:`quality_figures` computes quality.json's statistical part once; the section
shows it with each validation part of :mod:`.validation`, and says for every part
that has no input which command would make it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from recworld.lunar.quality import dims
from recworld.lunar.quality.stats import affinity_entropy, cross_week_cosine, fidelity
from recworld.lunar.report import validation
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import RealStats, SynthManifest
from recworld.reportkit import Figure, Section, Table, cells
from recworld.reportkit.figures import Bar, bars

__all__ = ["has_dataset", "quality_figures", "quality_section"]

JSD_LABELS = {
    "with_anchors": "with anchors",
    "without_anchors": "without anchors",
    "with_anchors_baseline": "with anchors (baseline)",
    "without_anchors_baseline": "without anchors (baseline)",
}


def has_dataset(root: Path) -> bool:
    return (root / "manifest.json").is_file() and (store.dataset_dir(root) / "records.jsonl").is_file()


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


def _num(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def _statistics(quality: dict[str, Any]) -> Section:
    cw, ent = quality["cross_week_cosine"], quality["affinity_entropy"]
    combined = [c for c in quality["consistency"] if c is not None]
    rows = [
        cells("cross-week cosine, all pairs", _num(cw["all_pairs"])),
        cells("cross-week cosine, consecutive weeks", _num(cw["consecutive"])),
        cells("normalised affinity entropy (weighted)", _num(ent["weighted"])),
        cells("mean week consistency (0–1)", _num(float(np.mean(combined)) if combined else None)),
    ]
    notes = []
    if cw["all_pairs"] is None:
        notes.append(
            "Cross-week cosine needs users with records in two or more weeks (lunar synth --weeks 2)."
        )
    if not combined:
        notes.append("No week was checked for consistency (lunar synth ran with --no-validate).")
    table = Table(
        key="quality-statistics",
        title="Statistical quality (Table 9)",
        columns=["figure", "value"],
        rows=rows,
        left=1,
    )
    return Section(
        key="quality-statistics", title="Stability, diversity, consistency", notes=notes, tables=[table]
    )


def _jsd(quality: dict[str, Any], external: validation.ExternalJsd | None) -> Section:
    columns = {JSD_LABELS.get(k, k): v for k, v in sorted(quality["jsd"].items())}
    if external is not None:
        columns[f"external: {external.reference}"] = external.jsd
    rows = [cells(dim, *(_num(v[dim]) for v in columns.values())) for dim in validation.DIMS]
    table = Table(
        key="jsd",
        title="JSD between synthetic and real behaviour (Table 3; bits, 0 = identical)",
        columns=["dimension", *columns],
        rows=rows,
        caption="Behaviour type, local hour and local weekday against the anchors' real records.",
        left=1,
    )
    series = {name: [Bar(v[dim]) for dim in validation.DIMS] for name, v in columns.items()}
    svg = bars("jsd", "Jensen-Shannon divergence to real data", validation.DIMS, series, ylabel="JSD (bits)")
    notes = []
    if not any(k.startswith("without_anchors") for k in quality["jsd"]):
        notes.append(
            "No no-anchor baseline: synthesise one with `lunar synth --no-anchors` and pass it as "
            "`lunar report ROOT --baseline DIR` for the anchor ablation."
        )
    if external is None:
        notes.append(
            "No external dataset: pass `lunar report ROOT --reference DATASET` for Table 3's comparison."
        )
    figure = Figure("jsd", svg, "JSD per dimension and source; lower is closer to the real logs.")
    return Section(
        key="jsd", title="Fidelity to real behaviour", notes=notes, tables=[table], figures=[figure]
    )


def _ratings(section: validation.ValidationSection) -> Section:
    if section.ratings is None:
        empty = "No LLM quality ratings: run `recworld lunar rate ROOT --model M`."
        return Section(key="quality-ratings", title="LLM-rated quality (Tables 1, 9)", empty=empty)
    summary = section.ratings.summary
    present = [d for d in (*dims.HISTORY, *dims.QUERY) if summary.dimensions.get(d) is not None]
    series = {section.ratings.model: [Bar(summary.dimensions.get(d)) for d in present]}
    figures = []
    if present:
        svg = bars("quality-ratings", "LLM-rated quality by dimension", present, series, ylabel="mean (1–5)")
        figures.append(Figure("quality-ratings-chart", svg, "Mean rating per dimension (1–5)."))
    return Section(
        key="quality-ratings",
        title="LLM-rated quality (Tables 1, 9)",
        tables=[validation.ratings_table(section.ratings)],
        figures=figures,
    )


def _agreement(section: validation.ValidationSection) -> Section:
    if section.agreement is None:
        empty = (
            "No rater agreement: export a sheet with `recworld lunar annotate ROOT`, collect ratings, then "
            "`recworld lunar agreement SHEETS... --out ROOT`."
        )
        return Section(key="agreement", title="Rater agreement (Tables 2, 10)", empty=empty)
    return Section(
        key="agreement",
        title="Rater agreement (Tables 2, 10)",
        tables=[validation.agreement_table(section.agreement)],
    )


def quality_section(quality: dict[str, Any] | None, section: validation.ValidationSection | None) -> Section:
    """The whole data-quality section (``quality`` None: the folder has no synthesised dataset)."""
    title = "Data quality"
    if quality is None or section is None:
        empty = (
            "No synthesised dataset in this folder (manifest.json or dataset/ missing): run `lunar synth`."
        )
        return Section(key="quality", title=title, empty=empty)
    parts = [_statistics(quality), _jsd(quality, section.external), _ratings(section), _agreement(section)]
    return Section(key="quality", title=title, subsections=parts)
