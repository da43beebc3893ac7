"""Evidence selection: relevance over all records, a fair cap across domains, tags from evidence."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence

import numpy as np

from helpers.lunar import make_llm
from recworld.chat import Request
from recworld.lunar.queries.evidence import fair_cap, keep_supported, relevance
from recworld.lunar.queries.rubrics import build_rubric
from recworld.lunar.schemas import (
    BehaviourRecord,
    BehaviourType,
    Category,
    EvidenceSet,
    Query,
    Rubric,
)


def _rec(rid: str, domain: Category, ts: int, **fields: str) -> BehaviourRecord:
    return BehaviourRecord(
        record_id=rid, user_id="u", timestamp=ts, domain=domain, type=BehaviourType.ORDER, fields=dict(fields)
    )


QUERY = Query(
    query_id="u/q000",
    user_id="u",
    text="Plan my trip: where to eat sushi and what to pack?",
    domains=[Category.DINING, Category.MOVIES],
    multi_domain=True,
)


def _responder(useful: bool = True) -> tuple[list[str], Callable[[Request], str]]:
    prompts: list[str] = []

    def respond(request: Request) -> str:
        prompt = request.messages[-1].content
        if request.json_schema is None:
            return "A generic answer."
        title = request.json_schema["title"]
        ids = re.findall(r"^\[([^\]]+)\]", prompt, flags=re.M)
        if title == "DecisionDraft":
            prompts.append(prompt)
            return json.dumps({"useful": useful, "reason": "r", "record_ids": ids[:5] if useful else []})
        if title == "EffectsDraft":
            return json.dumps({"effects": [{"record_id": i, "effect": "e"} for i in ids]})
        if title == "RubricDraft":
            return json.dumps({"facts": ["f"], "points": ["p"]})
        raise AssertionError(title)

    return prompts, respond


def test_cap_is_shared_fairly_across_domains() -> None:
    records = [
        _rec(f"{d.value}-{n}", d, 1000 + n, item=f"thing {n}")
        for d in (Category.AIR_TRAVEL, Category.DINING, Category.SHOPPING)
        for n in range(6)
    ]
    _, respond = _responder()
    llm, _ = make_llm(respond)
    rubric = asyncio.run(build_rubric(llm, QUERY, records, max_evidence=8))
    assert rubric is not None
    per_domain = {d: sum(i.startswith(d.value) for i in rubric.evidence.record_ids) for d in Category}
    # Before: air_travel 5, dining 3, shopping 0 (alphabetical truncation) while shopping was "useful".
    assert sorted(v for v in per_domain.values() if v) == [2, 3, 3]
    assert set(rubric.evidence.domains) == {Category.AIR_TRAVEL, Category.DINING, Category.SHOPPING}


def test_candidates_come_from_all_records_by_relevance() -> None:
    old_sushi = _rec("dining-old", Category.DINING, 10, dish="sushi platter", merchant="Kura")
    newer = [
        _rec(f"dining-{n}", Category.DINING, 1000 + n, dish="pizza", merchant="Luigi") for n in range(30)
    ]
    prompts, respond = _responder()
    llm, _ = make_llm(respond)
    rubric = asyncio.run(build_rubric(llm, QUERY, [old_sushi, *newer], per_domain=20))
    assert rubric is not None
    assert "[dining-old]" in prompts[0]  # before: only the 20 newest were shown
    assert rubric.evidence.record_ids[0] == "dining-old"  # the most relevant id leads


def test_lexical_relevance_prefers_overlap() -> None:
    a = _rec("a", Category.DINING, 1, dish="sushi")
    b = _rec("b", Category.DINING, 2, dish="burger")
    scores = relevance("sushi tonight", [a, b])
    assert scores[0] > scores[1] == 0.0


def test_fair_cap_orders_domains_by_strength_not_name() -> None:
    chosen = {Category.AIR_TRAVEL: ["a1", "a2"], Category.SHOPPING: ["s1", "s2"]}
    score = {"a1": 0.1, "a2": 0.05, "s1": 0.9, "s2": 0.2}
    assert fair_cap(chosen, score, 3) == ["s1", "a1", "s2"]


def _rubric(ids: list[str], domains: list[Category], points: list[str]) -> Rubric:
    return Rubric(
        query_id=QUERY.query_id,
        user_id="u",
        generic_answer="g",
        decisions=[],
        evidence=EvidenceSet(record_ids=ids, domains=domains),
        effects=[],
        facts=["f"] if ids else [],
        points=points,
    )


def test_multi_domain_comes_from_evidence_and_unsupported_queries_are_dropped() -> None:
    single = _rubric(["d1"], [Category.DINING], ["p"])
    multi = _rubric(["d1", "m1"], [Category.DINING, Category.MOVIES], ["p"])
    no_evidence = _rubric([], [], [])
    no_points = _rubric(["d1"], [Category.DINING], [])
    solo_tag = QUERY.model_copy(update={"domains": [Category.DINING], "multi_domain": False})
    pairs = [(QUERY, single), (solo_tag, multi), (QUERY, no_evidence), (QUERY, no_points), (QUERY, None)]
    kept, unsupported = keep_supported(pairs)
    assert unsupported == 2
    assert [(q.domains, q.multi_domain) for q, _ in kept] == [
        ([Category.DINING], False),  # tagged multi by the generator, single by evidence
        ([Category.DINING, Category.MOVIES], True),
    ]


def test_no_useful_domain_gives_an_unsupported_rubric() -> None:
    records = [_rec("d1", Category.DINING, 1, dish="sushi")]
    _, respond = _responder(useful=False)
    llm, _ = make_llm(respond)
    rubric = asyncio.run(build_rubric(llm, QUERY, records))
    assert rubric is not None and rubric.evidence.record_ids == []
    assert keep_supported([(QUERY, rubric)]) == ([], 1)


class _OneHot:
    """Embeds the query and every line mentioning 'kura' on one axis, everything else on another."""

    identity = "one-hot"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 2), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, 0 if ("kura" in t.lower() or t == QUERY.text) else 1] = 1.0
        return out


def test_the_runs_embedder_ranks_candidates_when_given() -> None:
    kura = _rec("dining-kura", Category.DINING, 10, merchant="Kura")  # no word shared with the query
    newer = [_rec(f"dining-{n}", Category.DINING, 1000 + n, dish="pizza") for n in range(30)]
    prompts, respond = _responder()
    llm, _ = make_llm(respond)
    rubric = asyncio.run(build_rubric(llm, QUERY, [kura, *newer], per_domain=5, embedder=_OneHot()))
    assert rubric is not None and "[dining-kura]" in prompts[0]
    assert rubric.evidence.record_ids[0] == "dining-kura"
