"""Bidirectional consistency validation of a planned week.

Forward: do the day and slot plans, taken together, support the week theme?
Backward: rebuild the week's theme and rhythm from the slot plans alone and
compare with the plan (an LLM score, plus embedding cosine when an embedder is
given). A forward-only check misses weeks whose days are each compatible with
the theme yet jointly hollow it out; the backward pass catches those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field

from recworld.lunar.llm import StructuredLLM
from recworld.lunar.llm.decoding import room
from recworld.lunar.schemas import Consistency, WeekPlan
from recworld.records import Draft
from recworld.runner import BlockingEmbedder


class ScoreDraft(Draft):
    score: Literal[1, 2, 3, 4, 5]
    issues: list[str] = Field(default_factory=list, max_length=3, json_schema_extra=room(1))


class SummaryDraft(Draft):
    theme: str = Field(min_length=3, max_length=100)
    rhythm: str = Field(min_length=3, max_length=200)


def _slot_lines(week: WeekPlan) -> str:
    lines = []
    for day in week.days:
        for s in day.slots:
            kinds = ", ".join(t.value for t in s.expected)
            lines.append(f"{day.date} {s.start}-{s.end}: {s.scene.what} at {s.scene.where} ({kinds})")
    return "\n".join(lines) or "no slots"


def _plan_text(week: WeekPlan) -> str:
    return f"{week.theme}. {week.rhythm}"


@dataclass(frozen=True)
class Validation:
    """The scores of one week and what the validators said was wrong (fed to a regeneration)."""

    consistency: Consistency
    issues: tuple[str, ...]

    @property
    def failed(self) -> bool:
        """Every check failed: nothing vouches for the week."""
        return self.consistency.combined is None


async def review_week(
    llm: StructuredLLM, week: WeekPlan, key: str, embedder: BlockingEmbedder | None = None
) -> Validation:
    days = "\n".join(f"{d.date}: {'; '.join(d.anchor_activities)}" for d in week.days)
    forward = await llm.structured(
        f"Week theme: {week.theme}. Rhythm: {week.rhythm}.\nDay plans:\n{days}\nSlots:\n{_slot_lines(week)}\n"
        "Score 1-5 how well the day and slot plans together carry out the week theme "
        "(5: fully, nothing contradicts or is missing; 1: unrelated). "
        'JSON shape: {"score": 4, "issues": ["..."]}',
        ScoreDraft,
        stage="validate-forward",
        key=key,
        max_tokens=160,
    )
    summary = await llm.structured(
        f"Here are one person's planned time slots for a week:\n{_slot_lines(week)}\n"
        'Summarise the week as a theme and a rhythm. JSON shape: {"theme": "...", "rhythm": "..."}',
        SummaryDraft,
        stage="validate-backward",
        key=key,
        max_tokens=160,
    )
    backward: ScoreDraft | None = None
    cosine: float | None = None
    rebuilt: str | None = None
    if summary is not None:
        rebuilt = f"{summary.theme}. {summary.rhythm}"
        backward = await llm.structured(
            f"Plan: {_plan_text(week)}\nSummary rebuilt from the slots: {rebuilt}\n"
            "Score 1-5 how closely the rebuilt summary matches the plan. "
            'JSON shape: {"score": 4, "issues": []}',
            ScoreDraft,
            stage="validate-compare",
            key=key,
            max_tokens=120,
        )
        if embedder is not None:
            vectors = embedder.embed([_plan_text(week), rebuilt])
            cosine = float(np.clip(vectors[0] @ vectors[1], -1.0, 1.0))
    issues = [*(forward.issues if forward else []), *(backward.issues if backward else [])]
    if backward is not None and backward.score <= 3 and rebuilt is not None:
        issues.append(f"the slots read as '{rebuilt}', not as the planned theme")
    scores = combine(
        forward.score if forward else None,
        backward.score if backward else None,
        cosine,
        rebuilt,
    )
    return Validation(scores, tuple(dict.fromkeys(i.strip() for i in issues if i.strip())))


def combine(
    forward: int | None, backward: int | None, cosine: float | None, rebuilt: str | None = None
) -> Consistency:
    """Mean of the available checks on a 0–1 scale (LLM 1–5 → 0–1; cosine clipped at 0)."""
    parts = [(s - 1) / 4 for s in (forward, backward) if s is not None]
    if cosine is not None:
        parts.append(max(0.0, cosine))
    return Consistency(
        forward=forward,
        backward_llm=backward,
        backward_embed=cosine,
        reconstructed=rebuilt,
        combined=float(np.mean(parts)) if parts else None,
    )
