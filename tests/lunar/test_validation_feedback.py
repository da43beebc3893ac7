"""Week validation: a week nothing could validate is not accepted; issues reach the regeneration."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from helpers.lunar import lunar_responder, make_llm
from recworld.chat import Request
from recworld.lunar.anchors import load_anchors
from recworld.lunar.config import SynthOptions
from recworld.lunar.synth.pipeline import synthesize

VALIDATORS = ("ScoreDraft", "SummaryDraft")


def _with(
    base: Callable[[Request], str], override: Callable[[str, str], str | None]
) -> Callable[[Request], str]:
    def respond(request: Request) -> str:
        title = str(request.json_schema.get("title")) if request.json_schema else ""
        out = override(title, request.messages[-1].content)
        return out if out is not None else base(request)

    return respond


def test_week_is_not_accepted_when_every_validation_call_fails(ml100k_saved: Path) -> None:
    anchors = load_anchors(str(ml100k_saved), 1, seed=0)
    broken = _with(lunar_responder(), lambda t, _: "no json" if t in VALIDATORS else None)
    llm, _ = make_llm(broken, max_attempts=1)
    result = asyncio.run(synthesize(llm, anchors, SynthOptions(weeks=1, max_slots_per_day=1)))
    weeks = [w for u in result.users for w in u.trajectory.weeks]
    assert weeks == []  # before: accepted with combined=None
    assert {f.stage for f in llm.failures} >= {"validate-forward", "validate-backward"}


def test_validator_issues_are_passed_into_the_regeneration(ml100k_saved: Path) -> None:
    anchors = load_anchors(str(ml100k_saved), 1, seed=0)

    def low(title: str, prompt: str) -> str | None:
        if title == "ScoreDraft" and "carry out the week theme" in prompt:
            return json.dumps({"score": 1, "issues": ["no gym day although the rhythm promises two"]})
        return None

    llm, model = make_llm(_with(lunar_responder(), low))
    options = SynthOptions(weeks=1, max_slots_per_day=1, consistency_threshold=0.95, max_regenerations=1)
    asyncio.run(synthesize(llm, anchors, options))
    week_prompts = [
        c.messages[-1].content for c in model.calls if c.json_schema and c.json_schema["title"] == "WeekDraft"
    ]
    assert len(week_prompts) == 2
    assert "no gym day" not in week_prompts[0]
    assert "no gym day although the rhythm promises two" in week_prompts[1]
