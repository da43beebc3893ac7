"""Helpers shared by the LUNAR tests: a scripted model that speaks every LUNAR schema."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from recworld.lunar.llm import StructuredLLM
from recworld.models.base import Request
from recworld.models.scripted import ScriptedModel
from recworld.runner import ResponseCache, Runner, RunnerConfig

SLOT = {
    "start": "00:00",
    "end": "23:59",
    "scene": {
        "who": "alone",
        "what": "errands",
        "when": "daytime",
        "where": "city",
        "why": "routine",
        "how": "walking",
    },
    "expected": ["order", "watch"],
    "domains": ["dining", "movies"],
}


def lunar_responder(
    *, forward_score: int = 5, copy_anchors: bool = True, bad_first: set[str] | None = None
) -> Callable[[Request], str]:
    """Answers by the requested schema's title; ``bad_first`` titles get one invalid reply first."""
    seen: set[str] = set()

    def respond(request: Request) -> str:
        prompt = request.messages[-1].content
        if request.json_schema is None:
            return "Generic but helpful answer." if "Generic" not in prompt else "A personalised answer."
        title = str(request.json_schema.get("title"))
        if bad_first and title in bad_first and title not in seen:
            seen.add(title)
            return "not json at all"
        if title == "ProfileDraft":
            return json.dumps(
                {
                    "affinities": [
                        {"category": "dining", "score": 4, "preferences": ["ramen", "Contact Mr. Smith"]},
                        {"category": "fitness", "score": 2, "preferences": ["running"]},
                        {"category": "hotel", "score": 1, "preferences": ["boutique hotels"]},
                    ],
                    "lifestyle": {
                        "clothing": "casual",
                        "food": "call 555-123-4567 for takeout",
                        "housing": "lives at 12 Oak Street",
                        "mobility": "bikes",
                        "spending": "frugal",
                    },
                }
            )
        if title == "WeekDraft":
            return json.dumps({"theme": "routine week", "rhythm": "work, gym, movies at night"})
        if title == "DaysDraft":
            return json.dumps({"days": [{"anchor_activities": ["work"]} for _ in range(7)]})
        if title == "SlotsDraft":
            return json.dumps({"slots": [SLOT]})
        if title == "ScoreDraft":
            score = forward_score if "carry out the week theme" in prompt else 5
            return json.dumps({"score": score, "issues": []})
        if title == "SummaryDraft":
            return json.dumps({"theme": "routine week", "rhythm": "work and movies"})
        if title == "RecordsDraft":
            records = []
            if copy_anchors:
                for line in prompt.splitlines():
                    if line.startswith("- {"):
                        anchor = json.loads(line[2:])
                        fields = [{"name": k, "value": str(v)} for k, v in anchor["fields"].items()]
                        records.append(
                            {
                                "time": anchor["time"],
                                "domain": anchor["domain"],
                                "type": anchor["type"],
                                "fields": fields,
                            }
                        )
            records = records[:2]
            records.append(
                {
                    "time": "12:30",
                    "domain": "dining",
                    "type": "order",
                    "fields": [
                        {"name": "merchant", "value": "Noodle Bar"},
                        {"name": "amount", "value": "12.5"},
                        {"name": "guest_name", "value": "Alice Jones"},
                        {"name": "note", "value": "mail a@b.com"},
                    ],
                }
            )
            return json.dumps({"records": records})
        if title == "QueryDraft":
            return json.dumps(
                {"text": "Where should I eat tonight after the movie?", "domains": ["dining", "movies"]}
            )
        if title == "DecisionDraft":
            ids = re.findall(r"^\[([^\]]+)\]", prompt, flags=re.M)
            return json.dumps({"useful": True, "reason": "history matters", "record_ids": ids[:2]})
        if title == "EffectsDraft":
            ids = re.findall(r"^\[([^\]]+)\]", prompt, flags=re.M)
            return json.dumps({"effects": [{"record_id": i, "effect": "prefer this"} for i in ids]})
        if title == "RubricDraft":
            return json.dumps({"facts": ["likes ramen"], "points": ["suggest a noodle bar"]})
        if title == "PairDraft":
            return json.dumps(
                {
                    "response_1": {"pc": 4, "pd": 3},
                    "response_2": {"pc": 2, "pd": 2},
                    "rationale": "1 uses data",
                }
            )
        raise AssertionError(f"unexpected schema {title}")

    return respond


def make_llm(
    responder: Callable[[Request], str], tmp_path: Path | None = None, *, max_attempts: int = 3
) -> tuple[StructuredLLM, ScriptedModel]:
    model = ScriptedModel(responder)
    cache = ResponseCache(tmp_path / "cache.sqlite") if tmp_path is not None else None
    runner = Runner(model, RunnerConfig(progress=False, max_retries=0), cache)
    return StructuredLLM(runner, max_attempts=max_attempts), model
