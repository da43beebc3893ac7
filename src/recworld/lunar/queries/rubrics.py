"""Rubric construction: what a personalised answer to a query should contain.

1. A generic answer without any logs (the behaviour-agnostic baseline the judge compares against).
2. Per domain of the user's logs, independently: would its records (the ones most relevant
   to the query, out of all of them) add personal information beyond the generic answer?
   Useful domains name their evidence records.
3. The evidence set is the union of those records, capped fairly across domains.
4. Each evidence record's effect on the answer is analysed.
5. The effects are aggregated into behavioural facts and personalised points.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, tzinfo

from pydantic import Field

from recworld.lunar.llm import StructuredLLM, gather_or_cancel
from recworld.lunar.llm.decoding import room
from recworld.lunar.queries.evidence import candidates, fair_cap, relevance
from recworld.lunar.schemas import (
    BehaviourRecord,
    Category,
    DomainDecision,
    EvidenceSet,
    Query,
    RecordEffect,
    Rubric,
    records_block,
)
from recworld.records import Draft
from recworld.runner import BlockingEmbedder

GENERIC_SYSTEM = "You are a helpful assistant. You know nothing about the user beyond the request."


class DecisionDraft(Draft):
    useful: bool
    reason: str = Field(max_length=200)
    record_ids: list[str] = Field(default_factory=list, max_length=5, json_schema_extra=room(5))


class EffectDraft(Draft):
    record_id: str
    effect: str = Field(max_length=200)


class EffectsDraft(Draft):
    effects: list[EffectDraft] = Field(min_length=1, max_length=12, json_schema_extra=room(12))


class RubricDraft(Draft):
    # Compact decoding: up to 4 facts and points (each at most 4 words), within the 240-token reply.
    facts: list[str] = Field(min_length=1, max_length=6, json_schema_extra=room(4))
    points: list[str] = Field(min_length=1, max_length=6, json_schema_extra=room(4))


# The generic answer's token cap: the baseline a target answer is judged against.
GENERIC_TOKENS = 256


def baseline_note(answer_max_tokens: int) -> str | None:
    """What to say when answers and the generic baseline had different caps (None when equal).

    The generic answer is written once, at ``lunar queries``, under :data:`GENERIC_TOKENS`;
    an eval with ``--max-tokens`` or ``--smoke`` caps its answers otherwise, and the judge
    then compares unequal lengths (review U10). The eval log and the report's Runs table
    say so on every such row.
    """
    if answer_max_tokens == GENERIC_TOKENS:
        return None
    return (
        f"answers capped at {answer_max_tokens} tokens, judged against a generic baseline "
        f"written with up to {GENERIC_TOKENS}"
    )


async def generic_answer(llm: StructuredLLM, query: Query) -> str | None:
    return await llm.with_system(GENERIC_SYSTEM).text(
        query.text, stage="generic-answer", key=query.query_id, max_tokens=GENERIC_TOKENS
    )


async def _decide(
    llm: StructuredLLM,
    query: Query,
    generic: str,
    domain: Category,
    records: Sequence[BehaviourRecord],
    zone: tzinfo,
) -> tuple[DomainDecision, list[str]] | None:
    shown = {r.record_id for r in records}
    lines = records_block(records, zone)

    def check(draft: DecisionDraft) -> str | None:
        unknown = [i for i in draft.record_ids if i not in shown]
        if unknown:
            return f"unknown record ids {unknown[:3]}; use ids shown in brackets"
        if draft.useful and not draft.record_ids:
            return "a useful domain must name at least one record id"
        return None

    draft = await llm.structured(
        f"Request: {query.text}\nGeneric answer given without the user's logs:\n{generic}\n\n"
        f"The user's {domain.value} records (their local time):\n{lines}\n\n"
        "Would these records let an assistant add personal information the generic answer lacks? "
        "If yes, list the ids (in brackets) of the records that matter. "
        'JSON shape: {"useful": true, "reason": "...", "record_ids": ["..."]}',
        DecisionDraft,
        stage="rubric-domain",
        key=f"{query.query_id}/{domain.value}",
        check=check,
        max_tokens=200,
        enums={"record_ids": [r.record_id for r in records]},
    )
    if draft is None:
        return None
    return DomainDecision(domain=domain, useful=draft.useful, reason=draft.reason), list(
        draft.record_ids if draft.useful else []
    )


async def build_rubric(
    llm: StructuredLLM,
    query: Query,
    records: Sequence[BehaviourRecord],
    *,
    per_domain: int = 20,
    max_evidence: int = 8,
    embedder: BlockingEmbedder | None = None,
    zone: tzinfo = UTC,
) -> Rubric | None:
    """The rubric of one query from the user's records; None if the generic answer cannot be had.

    Each domain shows the LLM its ``per_domain`` records most relevant to the query (out of all
    of them); the ids it names are capped fairly across domains (:mod:`recworld.lunar.queries.evidence`).
    Records are shown (and ranked) in the user's local ``zone``.
    """
    generic = await generic_answer(llm, query)
    if generic is None:
        return None
    ranked = relevance(query.text, records, embedder, zone)
    scores = dict(zip((r.record_id for r in records), ranked, strict=True))
    by_domain: dict[Category, list[BehaviourRecord]] = {}
    for r in records:
        by_domain.setdefault(r.domain, []).append(r)
    domains = sorted(by_domain)
    shown = [
        candidates(by_domain[d], [scores[r.record_id] for r in by_domain[d]], per_domain) for d in domains
    ]
    results = await gather_or_cancel(
        [_decide(llm, query, generic, d, rs, zone) for d, rs in zip(domains, shown, strict=True)]
    )
    decisions = [r[0] for r in results if r is not None]
    chosen = {d: r[1] for d, r in zip(domains, results, strict=True) if r is not None}
    evidence_ids = fair_cap(chosen, scores, max_evidence)
    index = {r.record_id: r for r in records}
    evidence = [index[i] for i in evidence_ids]
    effects, facts, points = (
        await _effects_and_points(llm, query, evidence, zone) if evidence else ([], [], [])
    )
    return Rubric(
        query_id=query.query_id,
        user_id=query.user_id,
        generic_answer=generic,
        decisions=decisions,
        evidence=EvidenceSet(record_ids=evidence_ids, domains=sorted({r.domain for r in evidence})),
        effects=effects,
        facts=facts,
        points=points,
    )


async def _effects_and_points(
    llm: StructuredLLM, query: Query, evidence: Sequence[BehaviourRecord], zone: tzinfo
) -> tuple[list[RecordEffect], list[str], list[str]]:
    """Steps 4 and 5: each evidence record's effect, then the facts and points they add up to."""
    evidence_ids = [r.record_id for r in evidence]
    lines = records_block(evidence, zone)

    def covers(draft: EffectsDraft) -> str | None:
        missing = set(evidence_ids) - {e.record_id for e in draft.effects}
        return f"give an effect for every record; missing {sorted(missing)[:3]}" if missing else None

    drafted = await llm.structured(
        f"Request: {query.text}\nEvidence records (the user's local time):\n{lines}\n"
        "For each record say in one sentence how it should change a personalised answer. "
        'JSON shape: {"effects": [{"record_id": "...", "effect": "..."}]}',
        EffectsDraft,
        stage="rubric-effects",
        key=query.query_id,
        max_tokens=240,
        check=covers,
        enums={"effects.record_id": evidence_ids},
        lengths={"effects": len(evidence_ids)},
    )
    if drafted is None:
        return [], [], []
    shown = set(evidence_ids)
    effects = [
        RecordEffect(record_id=e.record_id, effect=e.effect) for e in drafted.effects if e.record_id in shown
    ]
    summary = "\n".join(f"- {e.record_id}: {e.effect}" for e in effects)
    rubric = await llm.structured(
        f"Request: {query.text}\nHow the user's records should shape the answer:\n{summary}\n"
        "Aggregate into a rubric: behavioural facts about this user the answer should rely on, and "
        "the personalised points a strong answer makes. "
        'JSON shape: {"facts": ["..."], "points": ["..."]}',
        RubricDraft,
        stage="rubric-aggregate",
        key=query.query_id,
        max_tokens=200,
    )
    if rubric is None:
        return effects, [], []
    return effects, list(rubric.facts), list(rubric.points)
