"""Judge order shuffling and blindness; context settings."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import numpy as np
import pytest
from lunar_helpers import make_llm

from recworld.chat import Request
from recworld.errors import ConfigError
from recworld.lunar.contexts import (
    ContextSetting,
    CuratedContext,
    FullContext,
    RagContext,
    UserData,
    estimate_tokens,
    make_builder,
    parse_settings,
)
from recworld.lunar.judge import JudgeItem, PersonalizationJudge, balanced_order
from recworld.lunar.schemas import (
    Affinity,
    BehaviourRecord,
    Category,
    Demographic,
    EvidenceSet,
    Lifestyle,
    Profile,
    Query,
    Rubric,
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
    head_cost = estimate_tokens(f"User profile:\n{user.profile.describe()}\n\nBehaviour records:\n")
    line_cost = estimate_tokens(user.records[-1].to_line()) + 1
    text = FullContext(budget_tokens=head_cost + 5 * line_cost).build(user, _query(0), _rubric(0))
    shown = [line.split("]")[0][1:] for line in text.splitlines() if line.startswith("[r")]
    assert shown == ["r35", "r36", "r37", "r38", "r39"]  # the newest five, in time order
    assert "ramen" in text
    everything = FullContext(budget_tokens=100_000).build(user, _query(0), _rubric(0))
    assert everything.count("\n[r") == 40


def test_curated_context_is_the_evidence_set() -> None:
    text = CuratedContext().build(_user(10), _query(0), _rubric(0, ["r07", "r02"]))
    assert [line[:5] for line in text.splitlines()[1:]] == ["[r02]", "[r07]"]
    assert CuratedContext().build(_user(10), _query(0), _rubric(0)) == ""


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
    rag = RagContext(_AxisEmbedder(), k=3)
    hits = rag.retrieve(list(user.records), "near shop12.3 please")
    assert [r.record_id for r in hits] == ["r12", "r13", "r11"]  # angular distance 0.03, 0.07, 0.13
    assert rag.build(user, _query(0), _rubric(0)).startswith("Retrieved behaviour records:")


def test_settings_parse_and_memory_needs_an_embedder() -> None:
    assert parse_settings("none, full,rag") == [ContextSetting.NONE, ContextSetting.FULL, ContextSetting.RAG]
    with pytest.raises(ConfigError, match="unknown context 'web'"):
        parse_settings("none,web")
    with pytest.raises(ConfigError, match="memory context needs an embedder"):
        make_builder(ContextSetting.MEMORY)
    with pytest.raises(ConfigError, match="embedder"):
        make_builder(ContextSetting.RAG)
