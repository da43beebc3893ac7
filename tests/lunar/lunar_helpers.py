"""Helpers shared by the LUNAR tests: a scripted model that speaks every LUNAR schema."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from recworld.chat import Request
from recworld.lunar.llm import StructuredLLM
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
        if title == "PrivacyDraft":
            return json.dumps({"offences": [], "score": 5})
        if title == "FactsDraft":
            ids = re.findall(r"^\[([^\]]+)\]", prompt, flags=re.M)
            return json.dumps({"facts": [f"fact about {i}" for i in ids] or ["no facts"]})
        raise AssertionError(f"unexpected schema {title}")

    return respond


def make_llm(
    responder: Callable[[Request], str], tmp_path: Path | None = None, *, max_attempts: int = 3
) -> tuple[StructuredLLM, ScriptedModel]:
    model = ScriptedModel(responder)
    cache = ResponseCache(tmp_path / "cache.sqlite") if tmp_path is not None else None
    runner = Runner(model, RunnerConfig(progress=False, max_retries=0), cache)
    return StructuredLLM(runner, max_attempts=max_attempts), model


# -- a tiny written LUNAR folder (quality, annotation and time-zone tests) ---------------------

# Monday 1998-03-02 00:00 in Chicago (CST, UTC-6) = 06:00 UTC.
CHICAGO_MONDAY = 888818400


def tiny_run(
    root: Path, *, users: int = 3, zone: str | None = "America/Chicago", active_days: int = 7
) -> Path:
    """A synthesised-looking folder: ``users`` profiles, one week each, two evening records a day."""
    from recworld.io import atomic_write_jsonl
    from recworld.lunar.schemas import (
        Affinity,
        BehaviourRecord,
        BehaviourType,
        Category,
        DayPlan,
        Demographic,
        Lifestyle,
        Profile,
        Scene,
        SlotPlan,
        Trajectory,
        WeekPlan,
    )

    scene = Scene(who="alone", what="dinner", when="evening", where="home", why="hungry", how="app")
    slot = SlotPlan(
        start="19:00", end="22:00", scene=scene, expected=[BehaviourType.ORDER], domains=[Category.DINING]
    )
    profiles, plans, records = [], [], []
    for n in range(users):
        uid = f"user-{n:03d}"
        demo = Demographic(user_id=uid, age=30 + n, occupation="engineer", timezone=zone)
        profiles.append(
            Profile(
                user_id=uid,
                demographic=demo,
                affinities=[
                    Affinity(category=Category.DINING, score=0.8, preferences=["ramen", f"tacos {n}"])
                ],
                lifestyle=Lifestyle(clothing="c", food="f", housing="h", mobility="m", spending="s"),
            )
        )
        days = [
            DayPlan(
                date=f"1998-03-0{2 + d}", anchor_activities=["work"], slots=[slot] if d < active_days else []
            )
            for d in range(7)
        ]
        plans.append(
            Trajectory(
                user_id=uid,
                start_ts=CHICAGO_MONDAY,
                weeks=[
                    WeekPlan(
                        index=0, start_date="1998-03-02", theme="routine week", rhythm="evenings", days=days
                    )
                ],
            )
        )
        for d in range(active_days):
            for k, minute in enumerate((19 * 60 + 30, 21 * 60)):
                records.append(
                    BehaviourRecord(
                        record_id=f"{uid}/w0/d{d}/s0/r{k}",
                        user_id=uid,
                        timestamp=CHICAGO_MONDAY + d * 86400 + minute * 60,
                        domain=Category.DINING,
                        type=BehaviourType.ORDER,
                        fields={"dish": "ramen"},
                    )
                )
    out = root / "dataset"
    atomic_write_jsonl(out / "profiles.jsonl", [p.to_json() for p in profiles])
    atomic_write_jsonl(out / "trajectories.jsonl", [t.to_json() for t in plans])
    atomic_write_jsonl(out / "records.jsonl", [r.to_json() for r in records])
    return root


def aligned_records(base: Callable[[Request], str]) -> Callable[[Request], str]:
    """Records that follow each anchor's time, domain and type with new content (what the prompt asks)."""

    def respond(request: Request) -> str:
        prompt = request.messages[-1].content
        if request.json_schema is None or request.json_schema.get("title") != "RecordsDraft":
            return base(request)
        records = []
        for line in prompt.splitlines():
            if line.startswith("- {"):
                a = json.loads(line[2:])
                item = {"name": "item", "value": f"another {a['domain']} pick"}
                records.append(
                    {"time": a["time"], "domain": a["domain"], "type": a["type"], "fields": [item]}
                )
        return json.dumps({"records": records[:5] or json.loads(base(request))["records"]})

    return respond
