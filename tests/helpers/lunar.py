"""Helpers shared by the LUNAR tests: a scripted model that speaks every LUNAR schema, and a local
OpenAI-compatible server that answers with the same responders (for in-process CLI runs).

Library tests hand the model to LUNAR as an object (``SessionConfig(model=ScriptedModel(...))``);
command-line tests point ``--model openai:NAME --base-url`` at :class:`FakeOpenAIServer`, so
nothing in recworld is patched either way.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from recworld.chat import Request
from recworld.lunar.answering.run import evaluate_settings
from recworld.lunar.config import LunarEvalConfig
from recworld.lunar.llm import StructuredLLM
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.schemas import (
    Affinity,
    BehaviourRecord,
    Category,
    Demographic,
    EvalInputs,
    EvidenceSet,
    Lifestyle,
    Profile,
    Query,
    Rubric,
    UserData,
)
from recworld.models import EmbedderBase, normalise
from recworld.models.scripted import ScriptedModel
from recworld.runner import ResponseCache, Runner, RunnerConfig
from recworld.testing.fake_server import FakeOpenAIServer

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
    from recworld.io import atomic_write_jsonl, mark_output_dir
    from recworld.lunar.config import RUN_KIND
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
    mark_output_dir(root, RUN_KIND)  # as lunar synth marks its folder when it has finished
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


def follow_real_days(base: Callable[[Request], str]) -> Callable[[Request], str]:
    """Slots that cover the day's real events (domain and type, at a plausible hour), and records
    that follow their slot: what the prompts ask when the anchors are known to the day only."""

    def respond(request: Request) -> str:
        prompt = request.messages[-1].content
        title = request.json_schema.get("title") if request.json_schema is not None else None
        if title == "SlotsDraft":
            real = re.search(r"^Real events of the day that slots must cover: (.+)$", prompt, flags=re.M)
            kinds = re.findall(r"([a-z_]+)/([a-z_]+)", real.group(1)) if real else []
            slots = [
                {
                    **SLOT,
                    "start": f"{9 + 2 * n:02d}:00",
                    "end": f"{10 + 2 * n:02d}:00",
                    "expected": [btype],
                    "domains": [domain],
                }
                for n, (domain, btype) in enumerate(dict.fromkeys(kinds))
            ]
            return json.dumps({"slots": slots[:1] or [SLOT]})
        if title == "RecordsDraft":
            slot = re.search(r"slot (\d\d:\d\d)-", prompt)
            kinds = re.search(
                r"^Expected behaviour types: ([a-z_]+).*; domains: ([a-z_]+)", prompt, flags=re.M
            )
            if slot and kinds:
                item = {"name": "item", "value": f"another {kinds.group(2)} pick"}
                record = {
                    "time": slot.group(1),
                    "domain": kinds.group(2),
                    "type": kinds.group(1),
                    "fields": [item],
                }
                return json.dumps({"records": [record]})
        return base(request)

    return respond


def scripted(responder: Callable[[Request], str] | None = None, name: str = "x") -> ScriptedModel:
    """A scripted model named ``scripted:NAME`` in run records (folder ``scripted-NAME``)."""
    return ScriptedModel(responder or lunar_responder(), name=name)


def session(model: ScriptedModel | str, **settings: Any) -> SessionConfig:
    """A session of ``model`` with ``settings`` as a dict gives them (``runner`` fills in over LUNAR's)."""
    return SessionConfig.model_validate({"model": model, **settings})


class HashEmbedder(EmbedderBase):
    """A deterministic bag-of-words embedder (an embedder object handed to LUNAR from Python)."""

    def __init__(self) -> None:
        self._identity = {"backend": "test", "model": "hash"}

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for i, t in enumerate(texts):
            for word in t.lower().split():
                out[i, hashlib.sha256(word.encode()).digest()[0] % 16] += 1
        return normalise(out)


EMBED_DIM = 16


def fake_embedding(text: str) -> list[float]:
    """A deterministic bag-of-words vector (hashlib, so it does not vary with PYTHONHASHSEED)."""
    out = [0.0] * EMBED_DIM
    for word in text.lower().split():
        out[hashlib.sha256(word.encode()).digest()[0] % EMBED_DIM] += 1.0
    return out


def lunar_server(respond: Callable[[Request], str]) -> FakeOpenAIServer:
    """The one fake server in mode ``respond``: chat by ``respond``, embeddings by :func:`fake_embedding`.

    A responder that raises :class:`HTTPStatusError` makes the server answer with that status.
    """
    return FakeOpenAIServer("respond", respond=respond, embed=fake_embedding)


# -- a small eval of scripted models (judge and report tests) -----------------------------------


def eval_user(uid: str = "u", n: int = 40) -> UserData:
    profile = Profile(
        user_id=uid,
        demographic=Demographic(user_id=uid, age=30),
        affinities=[Affinity(category=Category.DINING, score=0.9, preferences=["ramen"])],
        lifestyle=Lifestyle(clothing="c", food="f", housing="h", mobility="m", spending="s"),
    )
    records = tuple(
        BehaviourRecord(
            record_id=f"r{i:02d}",
            user_id=uid,
            timestamp=1000 * i,
            domain=Category.DINING,
            type="order",  # type: ignore[arg-type]
            fields={"merchant": f"shop{i}"},
        )
        for i in range(n)
    )
    return UserData(profile, records)


def eval_pair(n: int, uid: str = "u") -> tuple[Query, Rubric]:
    q = Query(
        query_id=f"{uid}/q{n}",
        user_id=uid,
        text=f"question {n} please",
        domains=[Category.DINING],
        multi_domain=False,
    )
    r = Rubric(
        query_id=q.query_id,
        user_id=uid,
        generic_answer="BASELINE TEXT",
        decisions=[],
        evidence=EvidenceSet(record_ids=["r01"]),
        effects=[],
        facts=["f"],
        points=["p"],
    )
    return q, r


def eval_config(root: Path, **update: object) -> LunarEvalConfig:
    return LunarEvalConfig.model_validate(
        {
            "root": root,
            "answer": SessionConfig(model="scripted:a"),
            "judge": SessionConfig(model="scripted:j"),
            "contexts": ("none", "full"),
            **update,
        }
    )


def run_small_eval(tmp_path: Path, responder: Callable[[Request], str], **update: object) -> Path:
    """Two queries answered under none and full, judged (personalisation and privacy); returns the root."""
    answer_llm, _ = make_llm(responder, tmp_path / "a")
    judge_llm, _ = make_llm(responder, tmp_path / "j")
    inputs = EvalInputs(pairs=[eval_pair(0), eval_pair(1)], users={"u": eval_user()})
    asyncio.run(evaluate_settings(eval_config(tmp_path, **update), answer_llm, judge_llm, inputs, None))
    return tmp_path


# -- a model that copies what it is shown (the release gate's adversary) -------------------------

_ISO_DATE = re.compile(r"\b(?:19|20)\d\d-\d\d-\d\d\b")


# The drafts' length limits (the decoding schema leaves them out): field name -> characters.
_BUDGET = {"name": 30, "who": 60, "what": 80, "when": 40, "where": 60, "why": 80, "how": 60, "theme": 100}


def _fill(value: Any, schema: dict[str, Any], seen: Sequence[str], n: list[int], key: str = "") -> Any:
    """``value`` (a draft's JSON) with every free string replaced by whole copied strings that fit."""
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _fill(v, props.get(k, {}), seen, n, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, schema.get("items", {}), seen, n, key) for v in value]
    if not isinstance(value, str) or "enum" in schema or "pattern" in schema or not seen:
        return value
    budget = _BUDGET.get(key, 80)
    out: list[str] = []
    for k in range(len(seen)):  # rotate, so every copied string lands in some field
        piece = seen[(n[0] + k) % len(seen)]
        if len(" | ".join([*out, piece])) <= budget:
            out.append(piece)
    n[0] += 1
    return " | ".join(out) or value


def copycat(
    base: Callable[[Request], str], planted: Sequence[str], *, fail_keys: Sequence[str] = ()
) -> Callable[[Request], str]:
    """A model that copies every planted string (and every ISO date) it is shown into every text field.

    Hard anchors are copied verbatim into records (``base`` does that); every other free string of
    every reply is filled with the copied strings that fit its length. A records prompt matching one of
    the ``fail_keys`` regular expressions gets chat text with everything it saw, on every attempt: a
    failure whose rejected reply is all anchor content.
    """

    def respond(request: Request) -> str:
        prompt = "\n".join(m.content for m in request.messages)
        seen = [p for p in planted if p.lower() in prompt.lower()]
        seen += sorted(set(_ISO_DATE.findall(prompt)))
        reply = base(request)
        if request.json_schema is None:
            return reply + (" " + "; ".join(seen) if seen else "")
        title = request.json_schema.get("title")
        if title == "RecordsDraft" and any(re.search(k, prompt) for k in fail_keys):
            return "Sure! Here you go: " + "; ".join(seen)
        if title in ("ScoreDraft", "PairDraft", "PrivacyDraft", "DecisionDraft", "EffectsDraft"):
            return reply
        data = json.loads(reply)
        if title == "RecordsDraft":  # copied anchors stay verbatim; the model's own record gets the rest
            anchors = [json.loads(line[2:]) for line in prompt.splitlines() if line.startswith("- {")]
            copied = []
            for a in anchors[:1]:
                fields = [{"name": k, "value": str(v)} for k, v in a["fields"].items()]
                for lo in range(0, len(fields), 5):  # a record holds at most 5 fields: split the copy
                    copied.append(
                        {**{k: a[k] for k in ("time", "domain", "type")}, "fields": fields[lo : lo + 5]}
                    )
            data["records"] = [*copied[:2], data["records"][-1]]
            data["records"][-1]["fields"] = [
                {"name": name, "value": "x"} for name in ("merchant", "place", "booking_ref", "note", "title")
            ]
            filled = _fill(
                data["records"][-1], request.json_schema["properties"]["records"]["items"], seen, [0]
            )
            data["records"][-1] = filled
            return json.dumps(data)
        return json.dumps(_fill(data, request.json_schema, seen, [0]))

    return respond
