"""Agentic memory: facts distilled per batch of 10 through the Runner, cached, indexed in Qdrant, top-k."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from lunar_helpers import make_llm, scripted, session

from recworld.chat import Request
from recworld.lunar.contexts import ContextEnv, Sessions
from recworld.lunar.contexts.memory import MemoryContext, MemoryOptions, batches
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

TOPICS = ("ramen", "sushi", "pizza", "tacos", "curry")


class _TopicEmbedder:
    """One axis per topic word: a text points along the topics it names (deterministic, no model)."""

    identity = "test-topics"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for t in texts:
            v = np.array([1.0 if w in t.lower() else 0.0 for w in TOPICS] + [0.1], dtype=np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows)


def _user(uid: str, n: int) -> UserData:
    profile = Profile(
        user_id=uid,
        demographic=Demographic(user_id=uid, age=30),
        affinities=[Affinity(category=Category.DINING, score=0.9, preferences=["ramen"])],
        lifestyle=Lifestyle(clothing="c", food="f", housing="h", mobility="m", spending="s"),
    )
    records = tuple(
        BehaviourRecord(
            record_id=f"{uid}-r{i:02d}",
            user_id=uid,
            timestamp=1000 * i,
            domain=Category.DINING,
            type="order",  # type: ignore[arg-type]
            fields={"dish": TOPICS[i % len(TOPICS)]},
        )
        for i in range(n)
    )
    return UserData(profile, records)


def _distiller(request: Request) -> str:
    """One fact per record of the batch: 'user ate <dish> (<id>)'."""
    assert request.json_schema is not None and request.json_schema["title"] == "FactsDraft"
    found = re.findall(r"^\[([^\]]+)\] .* dish=(\w+)", request.messages[-1].content, flags=re.M)
    return json.dumps({"facts": [f"user ate {dish} ({rid})" for rid, dish in found]})


def _query(uid: str, text: str) -> tuple[Query, Rubric]:
    q = Query(query_id=f"{uid}/q0", user_id=uid, text=text, domains=[Category.DINING], multi_domain=False)
    r = Rubric(
        query_id=q.query_id,
        user_id=uid,
        generic_answer="g",
        decisions=[],
        evidence=EvidenceSet(record_ids=[]),
        effects=[],
        facts=["f"],
        points=["p"],
    )
    return q, r


def _env(root: Path, users: dict[str, UserData], judge_llm: StructuredLLM) -> ContextEnv:
    models = Sessions(
        answer=SessionConfig(model="scripted:a"), judge=SessionConfig(model="scripted:distiller")
    )
    return ContextEnv(
        root=root,
        inputs=EvalInputs(pairs=[], users=users),
        sessions=models,
        answer_llm=judge_llm,
        judge_llm=judge_llm,
        answer_max_tokens=256,
        embedder=_TopicEmbedder(),
    )


def _prepare(tmp_path: Path, users: dict[str, UserData], k: int = 50) -> tuple[MemoryContext, int, int]:
    llm, model = make_llm(_distiller, tmp_path)
    memory = MemoryContext(MemoryOptions(k=k))
    asked = asyncio.run(memory.prepare(_env(tmp_path, users, llm))).asked
    return memory, asked, len(model.calls)


def test_the_dry_run_counts_one_distillation_request_per_batch() -> None:
    users = {"u": _user("u", 23), "v": _user("v", 10)}
    models = Sessions(answer=SessionConfig(model="scripted:a"), judge=SessionConfig(model="scripted:j"))
    stage = MemoryContext(MemoryOptions()).plan(EvalInputs(pairs=[], users=users), models)["memory"]
    assert (stage.requests, stage.exact, stage.model) == (4, True, "scripted:j")  # 3 batches + 1
    assert stage.first_prompt is not None and "[u-r00]" in stage.first_prompt[1].content
    assert "[u-r10]" not in stage.first_prompt[1].content  # the first batch is records 0-9


def test_a_distiller_model_object_distils_instead_of_the_judge(tmp_path: Path) -> None:
    users = {"u": _user("u", 12)}
    judge_llm, judge = make_llm(_distiller, tmp_path)
    distiller = scripted(_distiller, name="distiller")
    memory = MemoryContext(MemoryOptions(distiller=session(distiller)))
    done = asyncio.run(memory.prepare(_env(tmp_path, users, judge_llm)))
    assert done.asked == 2 and len(distiller.calls) == 2 and judge.calls == []
    assert done.calls == 2 and done.failures == ()
    q, r = _query("u", "ramen place?")
    assert "ramen" in memory.build(users["u"], q, r)
    memory.close()


def test_batches_of_ten_in_time_order() -> None:
    user = _user("u", 23)
    chunks = batches(tuple(reversed(user.records)))
    assert [len(c) for c in chunks] == [10, 10, 3]
    assert [r.record_id for r in chunks[1]] == [f"u-r{i:02d}" for i in range(10, 20)]


def test_facts_distilled_per_batch_and_cached(tmp_path: Path) -> None:
    users = {"u": _user("u", 23), "v": _user("v", 10)}
    memory, asked, calls = _prepare(tmp_path, users)
    assert asked == 4 and calls == 4  # 3 batches for u, 1 for v: one request per batch of 10
    lines = [json.loads(x) for x in next((tmp_path / "memory").glob("facts_*/facts.jsonl")).open()]
    assert len(lines) == 33 and {x["batch"] for x in lines if x["user_id"] == "u"} == {0, 1, 2}
    first_batch = [x for x in lines if x["user_id"] == "u" and x["batch"] == 0]
    assert first_batch[0]["record_ids"] == [f"u-r{i:02d}" for i in range(10)]
    memory.close()
    # A rerun with the same cache sends nothing to the model and finds the same facts.
    again, asked_again, calls_again = _prepare(tmp_path, users)
    assert asked_again == 4 and calls_again == 0
    q, r = _query("u", "any sushi ideas?")
    assert "user ate sushi" in again.build(users["u"], q, r)
    again.close()


def test_top_k_retrieval_returns_the_relevant_fact_of_that_user(tmp_path: Path) -> None:
    users = {"u": _user("u", 20), "v": _user("v", 20)}
    memory, _, _ = _prepare(tmp_path, users, k=4)
    q, _ = _query("u", "I fancy curry tonight")
    hits = memory.retrieve("u", q.text)
    assert len(hits) == 4
    assert all(h.user_id == "u" for h in hits)  # never another user's facts
    assert all("curry" in h.text for h in hits)  # u ate curry 4 times (records 4, 9, 14, 19)
    memory.close()


def test_memory_context_renders_facts(tmp_path: Path) -> None:
    users = {"u": _user("u", 12)}
    memory, _, _ = _prepare(tmp_path, users, k=3)
    q, r = _query("u", "ramen place?")
    text = memory.build(users["u"], q, r)
    lines = text.splitlines()
    assert lines[0] == "Remembered facts about the user:"
    assert len(lines) == 4 and all(line.startswith("- user ate ") for line in lines[1:])
    assert "ramen" in lines[1]
    memory.close()


def test_build_before_prepare_is_a_bug(tmp_path: Path) -> None:
    memory = MemoryContext(MemoryOptions())
    q, r = _query("u", "xyz")
    with pytest.raises(RuntimeError, match="prepare"):
        memory.build(_user("u", 1), q, r)
