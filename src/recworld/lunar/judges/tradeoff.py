"""The privacy x personalisation trade-off (the paper's Fig. 4): one point per model, Full context.

Each point is one answering model (and its system prompt variant, ``plain`` by default;
``discreet`` runs are their own points, so the report can show what "do not recite
it" does): x is the mean personalisation Avg of its Full-context answers (failed
answers at the floor, judge errors left out), y the mean privacy score of the same
answers (those the privacy judge scored). Both axes are cut at 3.0 into balanced /
aggressive / conservative / ineffective. The Pareto front is taken over the models'
points of one prompt variant: a point is on it when no other model's point of that
variant is at least as good on both axes and better on one. Points of other contexts
the privacy judge scored (``--privacy-contexts``) are listed apart and never join
the front, which mixed contexts before.

``lunar eval`` writes :class:`PrivacyFigure` to ``RUN/privacy_figure.json`` after every
run, recomputed from all of ``RUN/eval/``; the report reads it back with the same class.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from recworld.lunar.judges.personalization import Judgment
from recworld.lunar.judges.privacy import PrivacyJudgment
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import EvalRun
from recworld.records import FrozenRecord, Record

PRIVACY_FIGURE_FILE = "privacy_figure.json"
FIGURE_CONTEXT = "full"
CUT = 3.0
Quadrant = Literal["balanced", "aggressive", "conservative", "ineffective"]
QUADRANTS: dict[tuple[bool, bool], Quadrant] = {
    (True, True): "balanced",
    (True, False): "aggressive",
    (False, True): "conservative",
    (False, False): "ineffective",
}


class PrivacyPoint(FrozenRecord):
    """One model (under one system prompt) in one context: its two means and what went into them."""

    model: str
    assistant_prompt: str
    context: str
    personalization: float | None  # mean Avg (PC + PD) / 2; failed answers at the floor 1
    privacy: float | None  # mean privacy score 1-5 (5 = no offence)
    queries: int
    judged: int  # answers with a personalisation score (floor rows included)
    scored: int  # answers with a privacy score
    privacy_errors: int  # privacy judge gave up
    failed_answers: int
    offences: dict[str, int]  # offence items by kind
    quadrant: Quadrant | None
    on_front: bool = False


class PrivacyFigure(Record):
    """``RUN/privacy_figure.json``: the figure's points (one per model) and the other contexts' apart."""

    schema_id: Literal["recworld.lunar.privacy_figure/1"] = Field(
        default="recworld.lunar.privacy_figure/1", alias="schema"
    )
    context: str = FIGURE_CONTEXT
    cut: float = CUT
    points: list[PrivacyPoint]
    other_contexts: list[PrivacyPoint] = Field(default_factory=list)

    @classmethod
    def of(cls, root: Path) -> PrivacyFigure | None:
        path = root / PRIVACY_FIGURE_FILE
        return cls.read(path) if path.exists() else None


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def quadrant(personalization: float | None, privacy: float | None, cut: float = CUT) -> Quadrant | None:
    if personalization is None or privacy is None:
        return None
    return QUADRANTS[(personalization >= cut, privacy >= cut)]


def point_of(run_dir: Path) -> PrivacyPoint | None:
    """The point of one ``eval/<model>/<context>/`` folder, or None when privacy was not judged there."""
    path = run_dir / "privacy.jsonl"
    if not path.exists():
        return None
    run = EvalRun.read(run_dir / "run.json")
    privacy = store.read_jsonl(path, PrivacyJudgment)
    judged = [j for j in store.read_jsonl(run_dir / "judgments.jsonl", Judgment) if j.error is None]
    offences: dict[str, int] = {}
    for p in privacy:
        for o in p.offences:
            offences[o.kind] = offences.get(o.kind, 0) + 1
    x = _mean([j.avg for j in judged if j.avg is not None])
    y = _mean([float(p.score) for p in privacy if p.score is not None])
    return PrivacyPoint(
        model=run.model,
        assistant_prompt=run.assistant_prompt,
        context=run.context,
        personalization=x,
        privacy=y,
        queries=run.counts.queries,
        judged=len(judged),
        scored=sum(p.score is not None for p in privacy),
        privacy_errors=sum(p.error is not None and not p.answer_failed for p in privacy),
        failed_answers=sum(p.answer_failed for p in privacy),
        offences=dict(sorted(offences.items())),
        quadrant=quadrant(x, y),
    )


def _dominates(a: PrivacyPoint, b: PrivacyPoint) -> bool:
    assert a.personalization is not None and a.privacy is not None
    assert b.personalization is not None and b.privacy is not None
    at_least = a.personalization >= b.personalization and a.privacy >= b.privacy
    return at_least and (a.personalization > b.personalization or a.privacy > b.privacy)


def pareto_front(points: Sequence[PrivacyPoint]) -> list[PrivacyPoint]:
    """``points`` with ``on_front`` set: not dominated by a point of the same prompt variant."""
    placed = [p for p in points if p.personalization is not None and p.privacy is not None]
    out = []
    for p in points:
        rivals = [q for q in placed if q.assistant_prompt == p.assistant_prompt and q is not p]
        front = p in placed and not any(_dominates(q, p) for q in rivals)
        out.append(p.model_copy(update={"on_front": front}))
    return out


def privacy_figure(root: Path, context: str = FIGURE_CONTEXT) -> PrivacyFigure:
    """Every evaluated model of ``root``: the ``context`` points (front over models), the rest apart."""
    found = [point_of(d.parent) for d in sorted((root / "eval").glob("*/*/run.json"))]
    points = [p for p in found if p is not None]
    key = lambda p: (p.assistant_prompt, p.model, p.context)  # noqa: E731
    figure = sorted((p for p in points if p.context == context), key=key)
    others = sorted((p for p in points if p.context != context), key=key)
    return PrivacyFigure(context=context, points=pareto_front(figure), other_contexts=others)


def write_privacy_figure(root: Path) -> PrivacyFigure:
    figure = privacy_figure(root)
    figure.write(root / PRIVACY_FIGURE_FILE)
    return figure
