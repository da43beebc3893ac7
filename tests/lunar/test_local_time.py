"""Every prompt a model sees shows records in the user's local time: each context, the rubric, the ranking.

The user lives in Chicago. Record ``lunch`` is Monday 13:00 there (19:00 UTC); record
``late`` is Monday 21:30 there, which is already Tuesday 03:30 in UTC, so a UTC
rendering would move both its hour and its weekday.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from helpers.lunar import make_llm, scripted, session, tiny_run
from recworld import lunar
from recworld.chat import Request
from recworld.io import atomic_write_jsonl
from recworld.lunar.contexts import ContextEnv, CuratedContext, FullContext, RagContext, Sessions
from recworld.lunar.contexts.full import FullOptions
from recworld.lunar.contexts.memory_loop import extract_prompt
from recworld.lunar.contexts.rag import RagOptions
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
from recworld.lunar.localtime import user_zones
from recworld.lunar.queries.evidence import relevance
from recworld.lunar.queries.rubrics import build_rubric
from recworld.lunar.schemas import (
    Affinity,
    BehaviourRecord,
    BehaviourType,
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
from recworld.lunar.store import dataset as store
from recworld.models import EmbedderBase
from recworld.models.embedding import Vectors

CHICAGO = ZoneInfo("America/Chicago")
MONDAY_LUNCH = 1709578800  # 2024-03-04 19:00 UTC = Mon 13:00 CST
LOCAL = ("2024-03-04 Mon 13:00", "2024-03-04 Mon 21:30")
UTC_SHOWN = ("2024-03-04 Mon 19:00", "2024-03-05 Tue 03:30")


def _records(uid: str = "u") -> tuple[BehaviourRecord, ...]:
    late = MONDAY_LUNCH + 8 * 3600 + 30 * 60  # 21:30 in Chicago = 03:30 UTC the next day
    return (
        BehaviourRecord(
            record_id=f"{uid}/lunch",
            user_id=uid,
            timestamp=MONDAY_LUNCH,
            domain=Category.DINING,
            type=BehaviourType.ORDER,
            fields={"dish": "ramen"},
        ),
        BehaviourRecord(
            record_id=f"{uid}/late",
            user_id=uid,
            timestamp=late,
            domain=Category.MOVIES,
            type=BehaviourType.WATCH,
            fields={"title": "a film"},
        ),
    )


def _user(zone: str | None = "America/Chicago") -> UserData:
    profile = Profile(
        user_id="u",
        demographic=Demographic(user_id="u", age=30, timezone=zone),
        affinities=[Affinity(category=Category.DINING, score=0.9, preferences=["ramen"])],
        lifestyle=Lifestyle(clothing="c", food="f", housing="h", mobility="m", spending="s"),
    )
    return UserData(profile, _records(), CHICAGO)


def _pair() -> tuple[Query, Rubric]:
    q = Query(
        query_id="u/q0", user_id="u", text="ramen tonight?", domains=[Category.DINING], multi_domain=False
    )
    r = Rubric(
        query_id="u/q0",
        user_id="u",
        generic_answer="g",
        decisions=[],
        evidence=EvidenceSet(record_ids=["u/lunch", "u/late"], domains=[Category.DINING, Category.MOVIES]),
        effects=[],
        facts=["f"],
        points=["p"],
    )
    return q, r


def assert_local(text: str) -> None:
    for local, utc in zip(LOCAL, UTC_SHOWN, strict=True):
        assert local in text, text
        assert utc not in text, text


class _Flat(EmbedderBase):
    def __init__(self) -> None:
        self._identity = {"backend": "test", "model": "flat"}

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return np.ones((len(texts), 3), dtype=np.float32)


class _SyncFlat:
    identity: ClassVar[dict[str, str]] = {"backend": "test", "model": "flat"}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)


def test_full_context_shows_local_time() -> None:
    text = FullContext(FullOptions(budget_tokens=10_000)).build(_user(), *_pair())
    assert_local(text)


def test_curated_context_shows_local_time() -> None:
    assert_local(CuratedContext.from_options().build(_user(), *_pair()))


def test_rag_context_shows_and_embeds_local_time() -> None:
    seen: list[str] = []

    class Recording(_SyncFlat):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            seen.extend(texts)
            return super().embed(texts)

    rag = RagContext(RagOptions(k=5), embedder=Recording())
    assert_local(rag.build(_user(), *_pair()))
    assert_local("\n".join(seen))  # what is embedded is the local line too


def test_memory_extraction_shows_local_time() -> None:
    assert_local(extract_prompt(_records(), CHICAGO))


def test_rubric_prompts_show_local_time() -> None:
    prompts: list[str] = []

    def respond(request: Request) -> str:
        prompts.append(request.messages[-1].content)
        title = request.json_schema["title"] if request.json_schema else None
        ids = re.findall(r"^\[([^\]]+)\]", request.messages[-1].content, flags=re.M)
        if title == "DecisionDraft":
            return json.dumps({"useful": True, "reason": "r", "record_ids": ids[:1]})
        if title == "EffectsDraft":
            return json.dumps({"effects": [{"record_id": i, "effect": "e"} for i in ids]})
        if title == "RubricDraft":
            return json.dumps({"facts": ["f"], "points": ["p"]})
        return "generic"

    llm, _ = make_llm(respond)
    rubric = asyncio.run(build_rubric(llm, _pair()[0], _records(), zone=CHICAGO))
    assert rubric is not None and len(rubric.evidence.record_ids) == 2
    decisions = [p for p in prompts if "Would these records" in p]
    assert (
        len(decisions) == 2
        and any(LOCAL[0] in p for p in decisions)
        and any(LOCAL[1] in p for p in decisions)
    )
    assert all(u not in p for p in decisions for u in UTC_SHOWN)
    (effects,) = [p for p in prompts if "Evidence records" in p]
    assert_local(effects)


def test_the_relevance_ranking_reads_local_weekdays() -> None:
    late = [_records()[1]]
    # "mon" is a word of the local line (Mon 21:30) and not of the UTC one (Tue 03:30).
    assert relevance("something for mon", late, zone=CHICAGO)[0] > 0
    assert relevance("something for mon", late)[0] == 0


def test_zones_come_from_the_profile_then_the_fallback(caplog: pytest.LogCaptureFixture) -> None:
    chicago, bare = _user().profile, _user(zone=None).profile
    assert chicago.zone_name() == "America/Chicago" and bare.zone_name() is None
    zones = user_zones([chicago, bare.model_copy(update={"user_id": "b"})], "Asia/Tokyo")
    assert zones == {"u": CHICAGO, "b": ZoneInfo("Asia/Tokyo")}
    with caplog.at_level(logging.WARNING, logger="recworld.lunar"):
        assert str(user_zones([bare], None)["u"]) == "UTC"
    assert "UTC" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="recworld.lunar"):
        user_zones([chicago], None)  # every user has a zone: no warning
    assert not caplog.records


def _with_queries(root: Path) -> Path:
    """tiny_run's users (Chicago, evening records at 19:30 and 21:00) with one query each."""
    pairs = [
        _pair()[0].model_copy(update={"query_id": f"user-00{n}/q0", "user_id": f"user-00{n}"})
        for n in range(2)
    ]
    rubrics = [
        _pair()[1].model_copy(
            update={
                "query_id": q.query_id,
                "user_id": q.user_id,
                "evidence": EvidenceSet(record_ids=[f"{q.user_id}/w0/d0/s0/r0"], domains=[Category.DINING]),
            }
        )
        for q in pairs
    ]
    atomic_write_jsonl(root / "queries.jsonl", [q.to_json() for q in pairs])
    atomic_write_jsonl(root / "rubrics.jsonl", [r.to_json() for r in rubrics])
    return root


def test_an_eval_shows_every_context_in_each_users_own_zone(tmp_path: Path) -> None:
    root = _with_queries(tiny_run(tmp_path / "run", users=2))
    # user-001's profile loses its zone: it takes --timezone (Tokyo) instead.
    profiles = store.profiles(root)
    bare = profiles[1].model_copy(
        update={"demographic": profiles[1].demographic.model_copy(update={"timezone": None})}
    )
    atomic_write_jsonl(root / "dataset" / "profiles.jsonl", [profiles[0].to_json(), bare.to_json()])
    answer = scripted(lambda r: "an answer", name="a")
    pair = {"response_1": {"pc": 3, "pd": 3}, "response_2": {"pc": 2, "pd": 2}}
    judge = scripted(lambda r: json.dumps(pair), name="j")
    config = lunar.LunarEvalConfig(
        root=root,
        answer=session(answer),
        judge=session(judge),
        embedder=EmbedderConfig.of(_Flat()),
        contexts=("full", "curated", "rag"),
        privacy=False,
        timezone="Asia/Tokyo",
    )
    lunar.evaluate_contexts(config)
    prompts = {c.messages[-1].content for c in answer.calls}
    chicago = [p for p in prompts if "user-000/" in p]
    tokyo = [p for p in prompts if "user-001/" in p]
    assert len(chicago) == 3 and len(tokyo) == 3  # one per context
    # The first record: Monday 19:30 in Chicago (01:30 UTC Tuesday); 10:30 Tuesday in Tokyo.
    assert all("1998-03-02 Mon 19:30" in p and "Tue 01:30" not in p for p in chicago)
    assert all("1998-03-03 Tue 10:30" in p and "Tue 01:30" not in p for p in tokyo)


def test_sessions_default_memory_is_none() -> None:
    bare = Sessions(answer=SessionConfig(model="scripted:a"), judge=SessionConfig(model="scripted:j"))
    assert bare.roles == {} and bare.model("memory") is None
    env = ContextEnv(
        root=Path("."),
        inputs=EvalInputs(pairs=[], users={}),
        sessions=Sessions(answer=SessionConfig(model="scripted:a"), judge=SessionConfig(model="scripted:j")),
        answer_llm=make_llm(lambda r: "")[0],
        judge_llm=make_llm(lambda r: "")[0],
        answer_max_tokens=1,
        embedder=None,
    )
    assert "do not recite" not in env.system
