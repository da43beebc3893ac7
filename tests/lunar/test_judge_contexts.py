"""Judge order shuffling and blindness; context settings."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from helpers.lunar import make_llm
from recworld.chat import Request
from recworld.errors import ConfigError
from recworld.lunar.config import LunarEvalConfig
from recworld.lunar.contexts import (
    ContextEnv,
    CuratedContext,
    FullContext,
    RagContext,
    Sessions,
    context_setting,
)
from recworld.lunar.contexts.full import FullOptions
from recworld.lunar.contexts.rag import RagOptions
from recworld.lunar.judges.personalization import JudgeItem, PersonalizationJudge, balanced_order
from recworld.lunar.llm.budget import CharEstimate
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


def _query(n: int) -> Query:
    return Query(
        query_id=f"u/q{n:03d}",
        user_id="u",
        text=f"question {n}",
        domains=[Category.DINING],
        multi_domain=False,
    )


def _rubric(n: int, evidence: Sequence[str] = ()) -> Rubric:
    return Rubric(
        query_id=f"u/q{n:03d}",
        user_id="u",
        generic_answer="BASELINE TEXT",
        decisions=[],
        evidence=EvidenceSet(record_ids=list(evidence)),
        effects=[],
        facts=["f"],
        points=["p"],
    )


@pytest.mark.parametrize("n", [0, 1, 2, 7, 10, 31])
def test_balanced_order_is_exactly_half_and_seeded(n: int) -> None:
    flags = balanced_order(n, 5, "m/full")
    assert len(flags) == n and sum(flags) in (n // 2, (n + 1) // 2)
    assert flags == balanced_order(n, 5, "m/full")
    if n >= 10:
        assert flags != balanced_order(n, 6, "m/full")


def test_judge_maps_positions_back_and_is_blind() -> None:
    # This judge always prefers Response 1: the target's scores must follow its position.
    def respond(request: Request) -> str:
        return json.dumps(
            {"response_1": {"pc": 5, "pd": 4}, "response_2": {"pc": 2, "pd": 1}, "rationale": "first"}
        )

    llm, model = make_llm(respond)
    items = [JudgeItem(_query(i), _rubric(i), f"TARGET ANSWER {i}") for i in range(10)]
    judgments = asyncio.run(PersonalizationJudge(llm).judge(items, seed=1, tag="m/full"))
    assert sum(j.target_first for j in judgments) == 5
    for j in judgments:
        if j.target_first:
            assert (j.pc, j.pd, j.baseline_pc, j.baseline_pd, j.avg) == (5, 4, 2, 1, 4.5)
        else:
            assert (j.pc, j.pd, j.baseline_pc, j.baseline_pd, j.avg) == (2, 1, 5, 4, 1.5)
    by_query = {j.query_id: j for j in judgments}
    assert len(model.calls) == 10
    for call in model.calls:
        prompt = call.messages[-1].content
        j = by_query[f"u/q{int(prompt.split('User request: question ')[1].split()[0]):03d}"]
        first = prompt.index("Response 1:")
        target_pos, base_pos = prompt.index("TARGET ANSWER"), prompt.index("BASELINE TEXT")
        assert (target_pos < base_pos) == j.target_first and first < min(target_pos, base_pos)
        bare = prompt.replace("TARGET ANSWER", "").replace("BASELINE TEXT", "").lower()
        assert "baseline" not in bare and "target" not in bare and "generic answer" not in bare
        assert call.json_schema is not None and call.json_schema["title"] == "PairDraft"


def test_judge_invalid_output_becomes_error_row() -> None:
    llm, _ = make_llm(lambda r: '{"response_1": {"pc": 7, "pd": 1}}', max_attempts=2)
    (j,) = asyncio.run(
        PersonalizationJudge(llm).judge([JudgeItem(_query(0), _rubric(0), "a")], seed=0, tag="t")
    )
    assert j.error is not None and j.pc is None


def _user(n_records: int) -> UserData:
    profile = Profile(
        user_id="u",
        demographic=Demographic(user_id="u", age=30),
        affinities=[Affinity(category=Category.DINING, score=0.9, preferences=["ramen"])],
        lifestyle=Lifestyle(clothing="c", food="f", housing="h", mobility="m", spending="s"),
    )
    records = tuple(
        BehaviourRecord(
            record_id=f"r{i:02d}",
            user_id="u",
            timestamp=1000 * i,
            domain=Category.DINING,
            type="order",  # type: ignore[arg-type]
            fields={"merchant": f"shop{i}"},
        )
        for i in range(n_records)
    )
    return UserData(profile, records)


def test_full_context_keeps_newest_records_within_budget() -> None:
    user = _user(40)
    chars4 = CharEstimate()
    head_cost = chars4.count(
        f"User profile:\n{user.profile.describe()}\n\nBehaviour records (the user's local time):\n"
    )
    line_cost = chars4.count(user.records[-1].to_line()) + 1
    full = FullContext(FullOptions(budget_tokens=head_cost + 5 * line_cost))
    text = full.build(user, _query(0), _rubric(0))
    shown = [line.split("]")[0][1:] for line in text.splitlines() if line.startswith("[r")]
    assert shown == ["r35", "r36", "r37", "r38", "r39"]  # the newest five, in time order
    assert "ramen" in text
    cover = full.coverage(_query(0).query_id)
    assert cover is not None and (cover.shown, cover.total, cover.dropped) == (5, 40, 35)
    everything = FullContext(FullOptions(budget_tokens=100_000)).build(user, _query(0), _rubric(0))
    assert everything.count("\n[r") == 40


def test_curated_context_is_the_evidence_set() -> None:
    curated = CuratedContext.from_options()
    text = curated.build(_user(10), _query(0), _rubric(0, ["r07", "r02"]))
    assert [line[:5] for line in text.splitlines()[1:]] == ["[r02]", "[r07]"]
    assert curated.build(_user(10), _query(0), _rubric(0)) == ""


class _AxisEmbedder:
    """Embeds 'shopN' on a circle by N and the query on the axis of the shop it names."""

    identity = "test-axis"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = []
        for t in texts:
            n = float(t.split("shop")[1].split()[0].rstrip(";")) if "shop" in t else 0.0
            out.append([np.cos(n / 10), np.sin(n / 10)])
        return np.asarray(out, dtype=np.float32)


def test_rag_returns_top_k_by_cosine() -> None:
    user = _user(30)
    rag = RagContext(RagOptions(k=3), embedder=_AxisEmbedder())
    hits = rag.retrieve(list(user.records), "near shop12.3 please")
    assert [r.record_id for r in hits] == ["r12", "r13", "r11"]  # angular distance 0.03, 0.07, 0.13
    assert rag.build(user, _query(0), _rubric(0)).startswith(
        "Retrieved behaviour records (the user's local time):"
    )


def test_unknown_contexts_are_refused_and_embedding_settings_need_an_embedder(tmp_path: Path) -> None:
    models = {"answer": SessionConfig(model="scripted:a"), "judge": SessionConfig(model="scripted:j")}
    config = LunarEvalConfig(root=tmp_path, contexts=("none", "full", "rag"), **models)
    assert config.contexts == ("none", "full", "rag") and config.options_of("rag") == RagOptions(k=30)
    with pytest.raises(ConfigError, match=r"unknown context 'web'; known: none, full, curated, rag, memory$"):
        LunarEvalConfig(root=tmp_path, contexts=("none", "web"), **models)
    llm, _ = make_llm(lambda r: "")
    env = ContextEnv(
        root=tmp_path,
        inputs=EvalInputs(pairs=[], users={}),
        sessions=Sessions(**models),
        answer_llm=llm,
        judge_llm=llm,
        answer_max_tokens=256,
        embedder=None,
    )
    assert context_setting("rag").needs_embedder
    with pytest.raises(ConfigError, match="the rag context needs an embedder"):
        asyncio.run(context_setting("rag").from_options().prepare(env))
    # Memory opens its own embedder (--memory-embedder), never RAG's; it needs its own model instead.
    assert not context_setting("memory").needs_embedder
    with pytest.raises(ConfigError, match="the memory context needs --memory-model"):
        asyncio.run(context_setting("memory").from_options().prepare(env))
