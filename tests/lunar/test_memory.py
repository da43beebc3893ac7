"""Agentic memory as Mem0 runs it: extract, retrieve, then ADD/UPDATE/DELETE/NONE, in embedded Qdrant."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from helpers.lunar import make_llm, scripted, session
from recworld.chat import Request
from recworld.lunar.contexts import ContextEnv, Sessions
from recworld.lunar.contexts.copies import closeness, copy_distance
from recworld.lunar.contexts.memory import MemoryContext, MemoryOptions, MemoryRun
from recworld.lunar.contexts.memory_loop import MemoryItem, MemoryStore, batches, extract_prompt
from recworld.lunar.llm import StructuredLLM
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
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
from recworld.models import EmbedderBase
from recworld.models.embedding import Vectors
from recworld.models.scripted import ScriptedModel

TOPICS = ("ramen", "sushi", "pizza", "gym", "curry")
CHICAGO = ZoneInfo("America/Chicago")


class TopicEmbedder(EmbedderBase):
    """One axis per topic word: a text points along the topics it names (deterministic, no model)."""

    def __init__(self) -> None:
        self._identity = {"backend": "test", "model": "topics"}
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        rows = [[1.0 if w in t.lower() else 0.0 for w in TOPICS] + [0.1] for t in texts]
        return np.asarray(rows, dtype=np.float32)


def _user(uid: str, n: int, dishes: Sequence[str] = ("ramen", "sushi", "pizza")) -> UserData:
    profile = Profile(
        user_id=uid,
        demographic=Demographic(user_id=uid, age=30, timezone="America/Chicago"),
        affinities=[Affinity(category=Category.DINING, score=0.9, preferences=["ramen"])],
        lifestyle=Lifestyle(clothing="c", food="f", housing="h", mobility="m", spending="s"),
    )
    # 2024-03-04 19:00 UTC = 13:00 in Chicago, one record an hour.
    records = tuple(
        BehaviourRecord(
            record_id=f"{uid}-r{i:02d}",
            user_id=uid,
            timestamp=1709578800 + 3600 * i,
            domain=Category.DINING,
            type="order",  # type: ignore[arg-type]
            fields={"dish": dishes[i % len(dishes)]},
        )
        for i in range(n)
    )
    return UserData(profile, records, CHICAGO)


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


# What the memory model extracts from each batch (by the batch's first record hour), and decides.
FACTS = {
    0: ["user likes ramen", "user orders sushi on fridays"],
    1: ["user dislikes sushi now", "user likes spicy ramen", "skip this"],
    2: ["user goes to the gym"],
}


def memory_model(request: Request) -> str:
    """Extraction by batch; decisions by rule: dislikes X deletes X, likes spicy X updates X, skip is NONE."""
    assert request.json_schema is not None
    prompt = request.messages[-1].content
    if request.json_schema["title"] == "FactsDraft":
        first = re.search(r"^- 2024-03-0(\d) \w{3} (\d\d):00", prompt, flags=re.M)
        assert first is not None
        hours = (int(first.group(1)) - 4) * 24 + int(first.group(2)) - 13  # since the first record
        return json.dumps({"facts": FACTS[hours // 10]})
    assert request.json_schema["title"] == "DecisionsDraft"
    shown = dict(re.findall(r"^- (m\d+): (.+)$", prompt, flags=re.M))
    facts = re.findall(r"^\d+\. (.+)$", prompt, flags=re.M)
    out = []
    for fact in facts:
        topic = next((t for t in TOPICS if t in fact), None)
        target = next((sid for sid, text in shown.items() if topic and topic in text), "new")
        if fact == "skip this":
            out.append({"event": "NONE", "memory_id": "new", "text": ""})
        elif "dislikes" in fact and target != "new":
            out.append({"event": "DELETE", "memory_id": target, "text": ""})
        elif "spicy" in fact and target != "new":
            out.append({"event": "UPDATE", "memory_id": target, "text": fact})
        else:
            out.append({"event": "ADD", "memory_id": "new", "text": fact})
    return json.dumps({"decisions": out})


def _env(
    root: Path, users: dict[str, UserData], judge: StructuredLLM, model: ScriptedModel, compact: bool = False
) -> ContextEnv:
    queries = [_query(u, "any ramen tonight?") for u in users]
    return ContextEnv(
        root=root,
        inputs=EvalInputs(pairs=queries, users=users),
        sessions=Sessions(
            answer=SessionConfig(model="scripted:a"),
            judge=SessionConfig(model="scripted:judge"),
            roles={
                "memory": session(model, runner={"max_retries": 0}, compact=compact),
                "memory_embedder": EmbedderConfig.of(TopicEmbedder()),
            },
        ),
        answer_llm=judge,
        judge_llm=judge,
        answer_max_tokens=256,
        embedder=None,
    )


def _prepare(
    root: Path, users: dict[str, UserData], k: int = 50, compact: bool = False
) -> tuple[MemoryContext, ScriptedModel, int]:
    judge, judge_model = make_llm(lambda r: "")
    model = scripted(memory_model, name="mem")
    memory = MemoryContext(MemoryOptions(k=k))
    done = asyncio.run(memory.prepare(_env(root, users, judge, model, compact)))
    assert judge_model.calls == []  # the judge never manages the memory
    return memory, model, done.asked


def _stored(root: Path, memory: MemoryContext) -> list[str]:
    """The memories in the Qdrant collection itself (not our bookkeeping)."""
    assert memory.run_record is not None
    store = memory._store
    assert store is not None
    points, _ = store._client.scroll(store.collection, limit=100, with_payload=True)
    return sorted(MemoryItem.model_validate(p.payload).text for p in points)


def test_batches_of_ten_in_time_order() -> None:
    user = _user("u", 23)
    chunks = batches(tuple(reversed(user.records)))
    assert [len(c) for c in chunks] == [10, 10, 3]
    assert [r.record_id for r in chunks[1]] == [f"u-r{i:02d}" for i in range(10, 20)]


def test_add_update_delete_loop_ends_in_the_decided_store(tmp_path: Path) -> None:
    users = {"u": _user("u", 30)}
    memory, model, asked = _prepare(tmp_path, users)
    assert asked == 6 and len(model.calls) == 6  # per batch: one extraction, one decision
    # batch 0 adds ramen and sushi; batch 1 deletes sushi and stores the fact that contradicts it
    # (the current state, review U9), updates ramen, ignores one; batch 2 adds gym.
    assert _stored(tmp_path, memory) == [
        "user dislikes sushi now",
        "user goes to the gym",
        "user likes spicy ramen",
    ]
    run = memory.run_record
    assert run is not None
    assert run.counts.events == {"ADD": 4, "UPDATE": 1, "DELETE": 1, "NONE": 1}
    assert (run.counts.facts, run.counts.memories, run.counts.batches_failed) == (6, 3, 0)
    out = tmp_path / "memory" / run.collection
    events = [json.loads(x) for x in (out / "events.jsonl").open()]
    update = next(e for e in events if e["event"] == "UPDATE")
    assert (update["previous"], update["text"]) == ("user likes ramen", "user likes spicy ramen")
    deleted = next(e for e in events if e["event"] == "DELETE")
    assert deleted["previous"] == "user orders sushi on fridays" and deleted["text"] is None
    kept = [json.loads(x) for x in (out / "memories.jsonl").open()]
    ramen = next(m for m in kept if "ramen" in m["text"])
    assert ramen["created_batch"] == 0 and ramen["updated_batch"] == 1
    assert ramen["record_ids"] == [f"u-r{i:02d}" for i in range(20)]  # both batches that shaped it
    assert MemoryRun.read(out / "memory_run.json") == run
    # The decision prompt showed the stored neighbours under short ids, never their UUIDs.
    second = next(c for c in model.calls if c.json_schema and c.json_schema["title"] == "DecisionsDraft"
                  and "dislikes" in c.messages[-1].content)  # fmt: skip
    assert (
        "- m1: user" in second.messages[-1].content and ramen["memory_id"] not in second.messages[-1].content
    )
    memory.close()


def test_the_decoding_schema_enforces_events_ids_and_one_decision_per_fact(tmp_path: Path) -> None:
    memory, model, _ = _prepare(tmp_path, {"u": _user("u", 20)})
    decide = [
        c.json_schema for c in model.calls if c.json_schema and c.json_schema["title"] == "DecisionsDraft"
    ]
    first, second = decide
    assert first is not None and second is not None
    items = first["properties"]["decisions"]
    assert items["minItems"] == items["maxItems"] == 2  # two new facts, exactly two decisions
    assert items["items"]["properties"]["event"]["enum"] == ["ADD", "NONE"]  # nothing stored yet
    assert items["items"]["properties"]["memory_id"]["enum"] == ["new"]
    later = second["properties"]["decisions"]
    assert later["minItems"] == later["maxItems"] == 3
    assert later["items"]["properties"]["event"]["enum"] == ["ADD", "UPDATE", "DELETE", "NONE"]
    assert later["items"]["properties"]["memory_id"]["enum"] == ["new", "m1", "m2"]
    memory.close()


def test_compact_extraction_has_room_for_a_fact_per_record(tmp_path: Path) -> None:
    """U6: compact decoding once allowed one fact per batch, so nothing could ever be updated."""
    memory, model, _ = _prepare(tmp_path, {"u": _user("u", 23)}, compact=True)
    extract = [c.json_schema for c in model.calls if c.json_schema and c.json_schema["title"] == "FactsDraft"]
    counts = [(s["properties"]["facts"]["minItems"], s["properties"]["facts"]["maxItems"]) for s in extract]
    assert counts == [(10, 10), (10, 10), (3, 3)]  # one fact per record of each batch
    decide = next(c.json_schema for c in model.calls if c.json_schema and "decisions" in str(c.json_schema))
    assert decide is not None and decide["properties"]["decisions"]["maxItems"] == 2  # one per fact given
    memory.close()


def test_a_rerun_replays_from_the_cache_and_rebuilds_the_same_store(tmp_path: Path) -> None:
    users = {"u": _user("u", 30), "v": _user("v", 10, dishes=("curry",))}
    first, _, _ = _prepare(tmp_path, users)
    state = _stored(tmp_path, first)
    first.close()
    again, model_again, asked = _prepare(tmp_path, users)
    # Same cache: the scripted model object is new, so the calls it saw are the ones sent.
    assert asked == 8 and model_again.calls == []
    assert _stored(tmp_path, again) == state  # rebuilt from empty, not appended to
    # u ends with gym and spicy ramen; v's one batch added its own two facts.
    assert state == [
        "user dislikes sushi now",
        "user goes to the gym",
        "user likes ramen",
        "user likes spicy ramen",
        "user orders sushi on fridays",
    ]
    again.close()


def test_a_failed_decision_is_counted_and_changes_nothing(tmp_path: Path) -> None:
    def broken(request: Request) -> str:
        assert request.json_schema is not None
        if request.json_schema["title"] == "DecisionsDraft" and "dislikes" in request.messages[-1].content:
            return json.dumps({"decisions": [{"event": "DELETE", "memory_id": "m9", "text": ""}] * 3})
        return memory_model(request)

    judge, _ = make_llm(lambda r: "")
    memory = MemoryContext(MemoryOptions())
    model = scripted(broken, name="mem")
    done = asyncio.run(memory.prepare(_env(tmp_path, {"u": _user("u", 30)}, judge, model)))
    assert [(f.stage, f.key) for f in done.failures] == [("memory-decide", "u/b0001/decide")]
    assert "needs the id of a remembered memory" in done.failures[0].error
    assert memory.run_record is not None and memory.run_record.counts.batches_failed == 1
    # Batch 1 changed nothing; batch 2 still ran: sushi was never deleted, ramen never updated.
    assert _stored(tmp_path, memory) == [
        "user goes to the gym",
        "user likes ramen",
        "user orders sushi on fridays",
    ]
    memory.close()


def test_retrieval_takes_the_top_k_of_that_user_by_the_request(tmp_path: Path) -> None:
    users = {"u": _user("u", 30), "v": _user("v", 10, dishes=("curry",))}
    memory, _, _ = _prepare(tmp_path, users, k=1)
    q, r = _query("u", "any ramen tonight?")
    (hit,) = memory.retrieve("u", q.text)
    assert hit.user_id == "u" and hit.text == "user likes spicy ramen"
    text = memory.build(users["u"], q, r)
    assert text == "Remembered facts about the user:\n- user likes spicy ramen"
    assert all(m.user_id == "v" for m in memory.retrieve("v", q.text))  # never another user's
    memory.close()


def test_extraction_sees_local_time_and_no_record_ids() -> None:
    prompt = extract_prompt(_user("u", 10).records, CHICAGO)
    assert "- 2024-03-04 Mon 13:00 dining/order dish=ramen" in prompt  # 19:00 UTC is 13:00 in Chicago
    assert "u-r0" not in prompt


def test_the_dry_run_counts_extractions_exactly_and_decisions_as_a_bound() -> None:
    users = {"u": _user("u", 23), "v": _user("v", 10)}
    sessions = Sessions(
        answer=SessionConfig(model="scripted:a"),
        judge=SessionConfig(model="scripted:j"),
        roles={"memory": SessionConfig(model="scripted:m")},
    )
    plan = MemoryContext(MemoryOptions()).plan(EvalInputs(pairs=[], users=users), sessions)
    extract, decide = plan["memory-extract"], plan["memory-decide"]
    assert (extract.requests, extract.exact, extract.model) == (4, True, "scripted:m")  # 3 batches + 1
    assert (decide.requests, decide.exact) == (4, False)
    assert extract.first_prompt is not None and "Mon 13:00" in extract.first_prompt[1].content
    no_model = Sessions(answer=SessionConfig(model="scripted:a"), judge=SessionConfig(model="scripted:j"))
    with pytest.raises(Exception, match="--memory-model"):
        MemoryContext(MemoryOptions()).plan(EvalInputs(pairs=[], users=users), no_model)


def test_build_before_prepare_is_a_bug() -> None:
    memory = MemoryContext(MemoryOptions())
    q, r = _query("u", "xyz")
    with pytest.raises(RuntimeError, match="prepare"):
        memory.build(_user("u", 1), q, r)


def test_copy_distance_against_a_hand_computed_case() -> None:
    lines = ["2024-03-04 Mon 13:00 dining/order dish=ramen", "2024-03-04 Mon 14:00 fitness/workout place=gym"]
    # A copy of a record line: every token in one line, and the same characters.
    assert closeness(lines[0], lines) == (1.0, 1.0)
    # "user likes ramen": 1 of 3 tokens (ramen) in line 0, none in line 1.
    overlap, similarity = closeness("user likes ramen", lines)
    assert overlap == pytest.approx(1 / 3)
    import difflib

    expected = max(difflib.SequenceMatcher(None, "user likes ramen", line.lower()).ratio() for line in lines)
    assert similarity == pytest.approx(expected)
    d = copy_distance([("u", lines[0]), ("u", "user likes ramen")], {"u": lines})
    assert d.n == 2 and d.near_copies == 0.5
    assert d.token_overlap is not None and d.token_overlap.mean == pytest.approx((1 + 1 / 3) / 2)
    assert d.token_overlap.max == 1.0
    assert copy_distance([], {"u": lines}).token_overlap is None


def test_memory_store_reset_starts_empty(tmp_path: Path) -> None:
    store = MemoryStore("c", path=tmp_path / "q", url=None)
    item = MemoryItem(
        memory_id="0" * 32, user_id="u", text="t", created_batch=0, updated_batch=0, record_ids=[]
    )
    store.put(item, np.ones(3, dtype=np.float32))
    assert [m.text for m in store.search("u", np.ones(3, dtype=np.float32), 5)] == ["t"]
    store.reset()
    assert store.search("u", np.ones(3, dtype=np.float32), 5) == []
    store.close()


def test_a_run_record_of_the_old_distiller_reads_back_with_it_as_the_memory_model(tmp_path: Path) -> None:
    from recworld.lunar.config import LunarEvalConfig

    old = {
        "root": str(tmp_path),
        "answer": {"model": "openai:a"},
        "judge": {"model": "openai:j"},
        "contexts": ["memory"],
        "options": {"memory": {"k": 7, "qdrant_url": None, "distiller": {"model": "openai:d"}}},
    }
    config = LunarEvalConfig.model_validate(old)
    memory = config.roles.get("memory")
    assert isinstance(memory, SessionConfig) and memory.name == "openai:d"
    assert config.options_of("memory") == MemoryOptions(k=7)
    assert LunarEvalConfig.model_validate_json(config.model_dump_json(by_alias=True)) == config
