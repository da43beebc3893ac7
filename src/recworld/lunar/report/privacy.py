"""Report section: privacy against personalisation (the paper's Fig. 4), per-context privacy, truncation.

The figure has **one point per model**: x is the mean personalisation Avg of that
model's Full-context answers (failed answers at the floor, judge errors left out),
y the mean privacy score of the same answers (those the privacy judge scored). The
paper's privacy evaluation is over Full-context answers, so only the ``full``
context makes a point; a model judged under other contexts too
(``--privacy-contexts``) has those in the per-context table, never in the figure,
and the Pareto front is over models, so a ``none`` answer can never join it. Both
axes are cut at 3.0 into the paper's four regions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recworld.lunar.report.estimates import MIN_N, MetricCell, Share, mean_cell, share
from recworld.lunar.report.figures import Point, quadrant
from recworld.lunar.report.runs import EvalData
from recworld.lunar.report.viewer import view_key
from recworld.reportkit import Cell, Figure, Section, Table, cells

__all__ = [
    "CUT",
    "FIGURE_CONTEXT",
    "ModelPoint",
    "Truncation",
    "model_points",
    "pareto_front",
    "privacy_section",
    "truncation_rows",
]

CUT = 3.0
FIGURE_CONTEXT = "full"
REGIONS = {
    (True, True): "balanced",
    (True, False): "aggressive",
    (False, True): "conservative",
    (False, False): "ineffective",
}
EVAL_HINT = "recworld lunar eval ROOT --context full --model M --judge J"


@dataclass(frozen=True)
class ModelPoint:
    """One model's privacy and personalisation over the answers of one context (the figure: ``full``)."""

    model: str
    context: str
    personalisation: MetricCell
    privacy: MetricCell
    offended: Share  # privacy-scored answers with at least one offence item
    offences: dict[str, int]
    privacy_errors: int
    failed_answers: int

    @property
    def drawn(self) -> bool:
        return self.personalisation.mean is not None and self.privacy.mean is not None

    @property
    def region(self) -> str | None:
        x, y = self.personalisation.mean, self.privacy.mean
        return None if x is None or y is None else REGIONS[(x >= CUT, y >= CUT)]


def point_of(data: EvalData, seed: int) -> ModelPoint:
    scored = data.privacy_scored()
    offences: dict[str, int] = {}
    for p in scored:
        for o in p.offences:
            offences[o.kind] = offences.get(o.kind, 0) + 1
    keys = (data.model, data.context)
    return ModelPoint(
        model=data.model,
        context=data.context,
        personalisation=mean_cell([float(j.avg or 0) for j in data.scored()], seed, *keys, "avg"),
        privacy=mean_cell([float(p.score or 0) for p in scored], seed, *keys, "privacy"),
        offended=share(sum(bool(p.offences) for p in scored), len(scored)),
        offences=offences,
        privacy_errors=sum(p.error is not None and not p.answer_failed for p in data.privacy or []),
        failed_answers=sum(p.answer_failed for p in data.privacy or []),
    )


def model_points(evals: Sequence[EvalData], seed: int = 0) -> list[ModelPoint]:
    """The figure's points: one per model with privacy judgments of its Full-context answers."""
    return [point_of(e, seed) for e in evals if e.context == FIGURE_CONTEXT and e.privacy is not None]


def _beats(a: ModelPoint, b: ModelPoint) -> bool:
    ax, ay, bx, by = a.personalisation.mean, a.privacy.mean, b.personalisation.mean, b.privacy.mean
    assert ax is not None and ay is not None and bx is not None and by is not None
    return ax >= bx and ay >= by and (ax > bx or ay > by)


def pareto_front(points: Sequence[ModelPoint]) -> list[ModelPoint]:
    """The models no other model beats on both axes, by ascending personalisation."""
    drawn = [p for p in points if p.drawn]
    front = [p for p in drawn if not any(_beats(q, p) for q in drawn)]
    return sorted(front, key=lambda p: (p.personalisation.mean or 0.0, p.model))


@dataclass(frozen=True)
class Truncation:
    model: str
    context: str
    answers: int
    truncated: int
    shown: int
    total: int
    counter: str

    @property
    def dropped_share(self) -> float:
        return 1 - self.shown / self.total if self.total else 0.0


def truncation_rows(evals: Sequence[EvalData]) -> list[Truncation]:
    """Per run whose answers record coverage (a setting that may truncate the log, e.g. ``full``)."""
    rows = []
    for e in evals:
        answers = [a for a in e.answers if a.context_total is not None]
        if not answers:
            continue
        shown = sum(a.context_shown or 0 for a in answers)
        total = sum(a.context_total or 0 for a in answers)
        cut = sum((a.context_shown or 0) < (a.context_total or 0) for a in answers)
        counters = ", ".join(sorted({a.token_counter or "?" for a in answers}))
        rows.append(Truncation(e.model, e.context, len(answers), cut, shown, total, counters))
    return rows


def _offences(p: ModelPoint) -> str:
    return ", ".join(f"{k} {n}" for k, n in sorted(p.offences.items())) or "none"


def _models_table(points: Sequence[ModelPoint], front: Sequence[ModelPoint]) -> Table:
    on = {p.model for p in front}
    rows = [
        [
            Cell(p.model),
            Cell(p.personalisation.text(), view=view_key("", p.model, p.context)),
            Cell(p.privacy.text(), view=view_key("", p.model, p.context)),
            Cell(p.offended.text(), title="answers with at least one offence item; exact 95% interval"),
            Cell(p.region or "–"),
            Cell("yes" if p.model in on else ""),
        ]
        for p in points
    ]
    return Table(
        key="privacy-models",
        title="Figure 4's points: one per model, Full-context answers",
        columns=["model", "personalisation Avg", "privacy", "answers with an offence", "region", "Pareto"],
        rows=rows,
        caption=f"Means 1–5 with 95% intervals (below {MIN_N} scored answers: n too small). "
        f"Regions cut at {CUT} on both axes.",
        left=1,
    )


def _contexts_table(points: Sequence[ModelPoint]) -> Table:
    rows = []
    for p in points:
        judged = f"{p.privacy.n} ({p.privacy_errors} judge errors, {p.failed_answers} no answer)"
        rows.append(
            [
                *cells(p.model, p.context),
                Cell(p.privacy.text(), view=view_key("", p.model, p.context)),
                Cell(judged, css="warn" if p.privacy_errors else ""),
                *cells(p.offended.text(), _offences(p)),
            ]
        )
    return Table(
        key="privacy-contexts",
        title="Privacy by model and context",
        columns=["model", "context", "privacy", "privacy scored", "answers with an offence", "offences"],
        rows=rows,
        caption="Every setting the privacy judge scored. Offences by kind: profiling (severe), "
        "surveillance (moderate), condescension (mild).",
        left=2,
    )


def _truncation_table(rows: Sequence[Truncation]) -> Table:
    body = [
        cells(
            t.model,
            t.context,
            str(t.answers),
            f"{t.truncated} of {t.answers}",
            f"{t.shown} / {t.total}",
            f"{t.dropped_share:.1%}",
            t.counter,
        )
        for t in rows
    ]
    return Table(
        key="truncation",
        title="Truncated logs",
        columns=[
            "model",
            "context",
            "answers",
            "truncated logs",
            "records shown / total",
            "dropped",
            "counter",
        ],
        rows=body,
        caption="A log that does not fit the answer model's window keeps its newest records.",
        left=2,
    )


def _why_empty(evals: Sequence[EvalData]) -> str:
    if not evals:
        return f"No evaluations yet: run `{EVAL_HINT}`."
    if all(not e.run.config.privacy for e in evals):
        return (
            "No privacy judgments: every evaluation here ran with --no-privacy. The privacy judge scores "
            f"Full-context answers; run `{EVAL_HINT}` (privacy judging is on by default)."
        )
    if not any(e.context == FIGURE_CONTEXT for e in evals):
        return (
            "No privacy judgments: the privacy judge scores Full-context answers, and no evaluation here "
            f"used the full context; run `{EVAL_HINT}`."
        )
    return "No privacy judgments were written (no privacy.jsonl under eval/)."


def _figure_notes(points: Sequence[ModelPoint], judged_elsewhere: bool) -> list[str]:
    notes = []
    if not points and judged_elsewhere:
        notes.append(
            "No Full-context privacy judgments, so Figure 4 has no point: the paper's figure is over "
            f"Full-context answers; run `{EVAL_HINT}`. The other contexts' judgments are in the table."
        )
    for p in points:
        if not p.drawn:
            notes.append(
                f"{p.model}: no Full-context answer has both a privacy score and a personalisation score "
                f"({p.privacy_errors} privacy judge errors, {p.failed_answers} answers failed); not drawn."
            )
    if sum(p.drawn for p in points) == 1:
        notes.append("One model: the Pareto front compares models, so here it is that model alone.")
    return notes


def privacy_section(evals: Sequence[EvalData], seed: int = 0) -> Section:
    judged = [point_of(e, seed) for e in evals if e.privacy is not None]
    points = model_points(evals, seed)
    truncation = truncation_rows(evals)
    tables = [_truncation_table(truncation)] if truncation else []
    title = "Privacy and personalisation (Figure 4)"
    intro = (
        "The privacy judge scores one answer at a time, 1–5 (5 = no offence). The figure has one point "
        "per model, over its Full-context answers as in the paper; the Pareto front is over models."
    )
    if not judged:
        return Section(key="privacy", title=title, intro=intro, tables=tables, empty=_why_empty(evals))
    front = pareto_front(points)
    figures = []
    if any(p.drawn for p in points):
        drawn = [
            Point(p.model, p.personalisation.mean or 0.0, p.privacy.mean or 0.0) for p in points if p.drawn
        ]
        shown = [Point(p.model, p.personalisation.mean or 0.0, p.privacy.mean or 0.0) for p in front]
        caption = f"One point per model (Full-context answers); regions cut at {CUT}; line: the Pareto front."
        figures.append(Figure("privacy-quadrant", quadrant("privacy-quadrant", drawn, shown, CUT), caption))
    model_tables = [_models_table(points, front)] if points else []
    return Section(
        key="privacy",
        title=title,
        intro=intro,
        notes=_figure_notes(points, judged_elsewhere=bool(judged)),
        tables=[*model_tables, _contexts_table(judged), *tables],
        figures=figures,
        figures_first=True,
    )
