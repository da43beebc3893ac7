"""The evidence-ablation section of the LUNAR report: Table 5 (Full-E vs Single-E) and the k-curve (Fig. 3).

Reads what :mod:`recworld.lunar.answering.ablate` wrote under ``RUN/ablate/``: each
variant's evaluation runs, and ``ablate_run.json`` for the parts it could not run
and why. Scores are the personalisation judge's Avg ((PC+PD)/2) with the report's
intervals; a failed answer counts at the floor, a failed judgment is left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from recworld.lunar.answering.ablate import (
    ABLATE_DIR,
    K_SCALING,
    MULTI_FULL,
    MULTI_SINGLE,
    SINGLE_DOMAIN,
    AblateRun,
)
from recworld.lunar.report.estimates import MetricCell, mean_cell
from recworld.lunar.report.figures import k_curve
from recworld.lunar.report.runs import EvalData, load_evals
from recworld.lunar.report.viewer import ViewerData, view_key
from recworld.reportkit import Cell, Figure, Section, Table
from recworld.reportkit.figures import Bar

__all__ = ["Ablation", "ablation_section", "load_ablation"]

PARTS = {
    SINGLE_DOMAIN: "single-domain queries",
    MULTI_FULL: "multi-domain Full-E",
    MULTI_SINGLE: "multi-domain Single-E",
    K_SCALING: "k-scaling curve",
}


@dataclass(frozen=True)
class Ablation:
    """Every variant's evaluation runs, and the last ``lunar ablate``'s record (None: written before it)."""

    runs: dict[str, list[EvalData]]  # variant -> its runs (one per answer model)
    record: AblateRun | None

    def cells(self, seed: int) -> dict[str, dict[str, MetricCell]]:
        """model -> variant -> mean Avg with its interval."""
        out: dict[str, dict[str, MetricCell]] = {}
        for variant, evals in self.runs.items():
            for e in evals:
                values = [float(j.avg or 0) for j in e.scored()]
                out.setdefault(e.model, {})[variant] = mean_cell(values, seed, "ablate", e.model, variant)
        return out


def load_ablation(root: Path) -> Ablation:
    base = root / ABLATE_DIR
    variants = sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
    runs = {v: found for v in variants if (found := load_evals(base / v))}
    return Ablation(runs, AblateRun.of(root))


def k_points(cells: Mapping[str, MetricCell]) -> list[tuple[int, MetricCell]]:
    ks = sorted(int(v[1:]) for v in cells if re.fullmatch(r"k\d+", v))
    return [(k, cells[f"k{k}"]) for k in ks if cells[f"k{k}"].mean is not None]


def _drop(cells: Mapping[str, MetricCell]) -> str:
    full, single = cells.get(MULTI_FULL), cells.get(MULTI_SINGLE)
    if full is None or single is None or full.mean is None or single.mean is None:
        return "–"
    return f"{full.mean - single.mean:+.2f}"


def _cell(cells: Mapping[str, MetricCell], variant: str, model: str) -> Cell:
    found = cells.get(variant)
    if found is None:
        return Cell("–")
    return Cell(found.text(), view=view_key(variant, model, "curated"))


def _table(cells: Mapping[str, Mapping[str, MetricCell]]) -> Table:
    rows = []
    for model, by in sorted(cells.items()):
        curve = " ".join(f"k{k}={c.mean:.2f}" for k, c in k_points(by)) or "–"
        rows.append(
            [
                Cell(model),
                *(_cell(by, v, model) for v in (SINGLE_DOMAIN, MULTI_FULL, MULTI_SINGLE)),
                Cell(_drop(by)),
                Cell(curve),
            ]
        )
    columns = ["model", *(PARTS[v] for v in (SINGLE_DOMAIN, MULTI_FULL, MULTI_SINGLE))]
    return Table(
        key="ablation",
        title="Evidence ablations (Table 5)",
        columns=[*columns, "Full-E − Single-E", "Avg by k"],
        rows=rows,
        caption="Mean Avg of the curated context under each evidence set, with 95% intervals.",
        left=1,
    )


def _skipped_notes(ablation: Ablation) -> list[str]:
    if ablation.record is None:
        return []
    return [
        f"Not run: {', '.join(PARTS.get(p, p) for p in parts)}. {why[:1].upper()}{why[1:]}."
        for parts, why in ablation.record.reasons()
    ]


def _figure(cells: Mapping[str, Mapping[str, MetricCell]]) -> Figure | None:
    curves = {
        m: [(k, Bar(c.mean, c.low, c.high)) for k, c in points]
        for m, by in sorted(cells.items())
        if (points := k_points(by))
    }
    if not curves:
        return None
    caption = "Mean Avg by the number of evidence records shown (k), one record added at a time."
    return Figure("k-scaling", k_curve("k-scaling", curves), caption)


def add_views(ablation: Ablation, viewer: ViewerData) -> None:
    for variant, evals in ablation.runs.items():
        for e in evals:
            viewer.add(view_key(variant, e.model, "curated"), f"{e.model} · ablation {variant}", e)


def ablation_section(ablation: Ablation, seed: int = 0) -> Section:
    title = "Evidence ablations (Table 5, Figure 3)"
    intro = (
        "The curated context under changed evidence: single-domain queries, multi-domain queries with "
        "evidence from every relevant domain (Full-E) or one (Single-E), and the first k of k_max "
        "evidence records. The judge always sees the full rubric."
    )
    if not ablation.runs:
        empty = (
            "`lunar ablate` has not run on this folder: run `recworld lunar ablate ROOT --model M --judge J`."
        )
        if ablation.record is not None:
            empty = "`lunar ablate` ran but could not run any variant."
        return Section(key="ablation", title=title, intro=intro, notes=_skipped_notes(ablation), empty=empty)
    cells = ablation.cells(seed)
    figure = _figure(cells)
    notes = _skipped_notes(ablation)
    if figure is None and K_SCALING not in (ablation.record.skipped if ablation.record else {}):
        notes.append("No k-scaling variant has a scored answer, so there is no k-curve.")
    return Section(
        key="ablation",
        title=title,
        intro=intro,
        notes=notes,
        tables=[_table(cells)],
        figures=[figure] if figure is not None else [],
    )
