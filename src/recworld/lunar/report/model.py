"""The LUNAR report as one computed object: every section, table, figure and viewer entry, once.

:func:`build_report` reads the folder (:mod:`.runs`) and computes each section;
:mod:`.render` turns the :class:`LunarReport` into Markdown and HTML and
:mod:`.scores` writes report.csv from the same rows, so the renderings agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld.lunar.config import ReportConfig
from recworld.lunar.queries.rubrics import baseline_note
from recworld.lunar.report import ablation as abl
from recworld.lunar.report import validation
from recworld.lunar.report.estimates import MIN_N
from recworld.lunar.report.privacy import ModelPoint, model_points, privacy_section
from recworld.lunar.report.quality import has_dataset, quality_figures, quality_section
from recworld.lunar.report.runs import EvalData, load_evals, load_inputs
from recworld.lunar.report.scores import ScoreRow, score_rows, scores_section
from recworld.lunar.report.viewer import ViewerData, view_key
from recworld.lunar.store.outputs import QueriesRun, SynthManifest
from recworld.reportkit import Cell, Section, Table, cells
from recworld.reportkit.settings import describe_setting
from recworld.reportkit.viewer import Viewer

__all__ = ["METHOD", "LunarReport", "build_report"]

METHOD = (
    "Personalisation: each answer is judged pairwise against the query's generic answer, blind to which "
    "is which and with the target first in half of the items; PC and PD are 1–5 and Avg = (PC + PD) / 2. "
    "A failed answer is not judged and scores 1 on both (wrong or missing); a failed judgment is left out "
    "and counted. A mean of judge scores has a 95% interval from a smoothed Bayesian bootstrap on the 1–5 "
    "range (half a pseudo-observation at each end, so it never has zero width); below "
    f"{MIN_N} scored answers a cell shows its mean and n and says n too small. Shares (answers with a "
    "privacy offence, rater agreement) have exact Clopper-Pearson intervals. Privacy: one answer at a "
    "time, 1–5 (5 = no offence); Figure 4 has one point per model over its Full-context answers, the "
    "Pareto front is over models, and both axes are cut at 3.0."
)


@dataclass(frozen=True)
class LunarReport:
    """Everything the report shows, in reading order."""

    title: str
    facts: list[tuple[str, str]]  # what was evaluated, by whom: answer models, judge, synthesis model
    sections: list[Section]
    viewer: Viewer  # the sample viewer's entries (report.html)
    method: str
    rows: list[ScoreRow]  # the personalisation rows (report.csv, --json)
    points: list[ModelPoint]  # Figure 4's points (privacy.csv)
    quality: dict[str, Any]  # quality.json


def _names(values: Sequence[str]) -> str:
    return ", ".join(dict.fromkeys(values)) or "–"


def _facts(root: Path, evals: Sequence[EvalData]) -> list[tuple[str, str]]:
    facts = [
        ("answer models", _names([e.model for e in evals])),
        ("judge (personalisation and privacy)", _names(sorted({e.run.judge for e in evals}))),
        ("contexts", _names([e.context for e in evals])),
    ]
    if (root / "queries_run.json").is_file():
        queries = QueriesRun.read(root / "queries_run.json")
        facts.append(("queries", f"{queries.counts.queries}, written by {queries.config.llm.name}"))
    if (root / "manifest.json").is_file():
        manifest = SynthManifest.of(root)
        counts = manifest.counts
        facts.append(
            (
                "synthetic logs",
                f"{counts.users} users, {counts.weeks} weeks, {counts.records} records, "
                f"synthesised by {manifest.config.llm.name}",
            )
        )
        privacy = manifest.release.privacy if manifest.release is not None else None
        if privacy is not None and privacy.risks is not None:  # Anonymeter's risks, as on the release card
            for line in privacy.risks.lines():
                name, _, text = line.partition(": ")
                facts.append((f"release risk: {name}", text))
    return facts


def _settings(e: EvalData) -> str:
    """``max tokens 1024; options k=7``: the kit's setting line (LRWorld's runs show theirs the same way)."""
    config = e.run.config
    options = {k: v for k, v in config.options_of(e.context).to_json().items() if v is not None}
    parts = [
        describe_setting("max_tokens", config.answer_max_tokens),
        baseline_note(config.answer_max_tokens),
        describe_setting("options", options) if options else "",
    ]
    return "; ".join(p for p in parts if p)


def _runs_table(evals: Sequence[EvalData]) -> Table:
    rows = []
    for e in evals:
        c = e.run.counts
        privacy = "off" if e.privacy is None else f"{c.privacy_judged} scored, {c.privacy_errors} errors"
        rows.append(
            [
                *cells(e.model, e.context, e.run.judge, str(c.queries), str(c.answered)),
                Cell(str(c.answer_errors), css="warn" if c.answer_errors else ""),
                Cell(f"{c.judged} judged, {c.judge_errors} errors", css="warn" if c.judge_errors else ""),
                Cell(privacy),
                Cell(_settings(e), css="warn" if baseline_note(e.run.config.answer_max_tokens) else ""),
                Cell(str(e.run.config.seed)),
            ]
        )
    columns = ["model", "context", "judge", "queries", "answered", "answer errors", "judgments"]
    return Table(
        key="runs",
        title="Evaluation runs",
        columns=[*columns, "privacy judgments", "settings", "seed"],
        rows=rows,
        caption="Each eval/<model>/<context>/run.json: who answered, who judged, with what settings.",
        left=3,
    )


def _viewer(root: Path, evals: Sequence[EvalData], ablation: abl.Ablation) -> ViewerData:
    viewer = ViewerData(root, load_inputs(root))
    for e in evals:
        viewer.add(view_key("", e.model, e.context), f"{e.model} · {e.context}", e)
    abl.add_views(ablation, viewer)
    return viewer


def build_report(config: ReportConfig) -> LunarReport:
    """Read ``config.root`` once and compute every section of its report."""
    root, seed = config.root, config.seed
    evals = load_evals(root)
    rows = score_rows(evals, seed)
    quality: dict[str, Any] = {}
    section = None
    if has_dataset(root):
        quality = quality_figures(root, config.baseline)
        domain_map = config.domain_map or SynthManifest.of(root).config.domain_map
        section = validation.quality_section(root, config.reference, config.reference_timezone, domain_map)
        quality["validation"] = section.to_json()
    ablation = abl.load_ablation(root)
    runs = Section(key="runs", title="Runs", tables=[_runs_table(evals)]) if evals else None
    sections = [
        scores_section(evals, rows),
        privacy_section(evals, seed),
        abl.ablation_section(ablation, seed),
        quality_section(quality or None, section),
        *([runs] if runs is not None else []),
    ]
    return LunarReport(
        title="LUNAR report",
        facts=_facts(root, evals),
        sections=sections,
        viewer=_viewer(root, evals, ablation).viewer,
        method=METHOD,
        rows=rows,
        points=model_points(evals, seed),
        quality=quality,
    )
