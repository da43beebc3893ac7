"""What a grammar can enforce goes into the decoding schema: enums of allowed tags, exact per-call counts.

A small local model decodes through a grammar built from the schema (llama.cpp), so a rule
in the schema is a rule it cannot break; a rule only in the check is one it breaks some of
the time (SmolLM2 failed 6-14 % of query generations on "tag at least one of").
"""

from __future__ import annotations

import asyncio
import json
import re

from helpers.lunar import make_llm
from recworld.chat import Request
from recworld.lunar.llm import StructuredLLM
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.llm.decoding import compact_schema, fix_lengths, inline_schema
from recworld.lunar.queries.generate import QueryDraft, generate_queries
from recworld.lunar.queries.rubrics import build_rubric
from recworld.lunar.schemas import (
    Affinity,
    BehaviourRecord,
    BehaviourType,
    Category,
    Demographic,
    Lifestyle,
    Profile,
    Query,
)


def _profile() -> Profile:
    return Profile(
        user_id="u",
        demographic=Demographic(user_id="u"),
        affinities=[Affinity(category=Category.HOTEL, score=0.5, preferences=["x"])],
        lifestyle=Lifestyle(clothing="c", food="f", housing="h", mobility="m", spending="s"),
    )


def _records() -> list[BehaviourRecord]:
    return [
        BehaviourRecord(record_id=f"u/r{i}", user_id="u", timestamp=i, domain=d, type=BehaviourType.ORDER)
        for i, d in enumerate([Category.MUSIC, Category.DINING, Category.MUSIC])
    ]


def test_query_tags_are_an_enum_of_the_users_logged_domains() -> None:
    for compact in (False, True):
        llm, model = make_llm(
            lambda r: json.dumps({"text": "What should I play tonight?", "domains": ["music"]})
        )
        llm = StructuredLLM(llm.completer, compact=compact)
        (query,) = asyncio.run(generate_queries(llm, [_profile()], _records(), per_user=1))
        assert query.domains == [Category.MUSIC]
        schema = model.calls[0].json_schema
        assert schema is not None
        tags = schema["properties"]["domains"]["items"]
        assert tags["enum"] == [
            "dining",
            "music",
        ]  # logged domains only, not the 13 (nor the profile's hotel)
        if compact:
            assert schema["properties"]["domains"]["minItems"] == 1  # at least one tag, by the grammar


def test_exact_counts_survive_both_decoding_schemas() -> None:
    from recworld.lunar.queries.rubrics import EffectsDraft

    full = fix_lengths(inline_schema(EffectsDraft, for_decoding=True), {"effects": 3})
    assert full["properties"]["effects"]["minItems"] == full["properties"]["effects"]["maxItems"] == 3
    small = compact_schema(full)
    assert small["properties"]["effects"]["minItems"] == small["properties"]["effects"]["maxItems"] == 3
    none = compact_schema(fix_lengths(inline_schema(QueryDraft), {"domains": 0}))
    assert none["properties"]["domains"]["maxItems"] == 0


def test_the_effects_step_asks_for_one_effect_per_evidence_record() -> None:
    def respond(request: Request) -> str:
        title = request.json_schema["title"] if request.json_schema else None
        ids = re.findall(r"^\[([^\]]+)\]", request.messages[-1].content, flags=re.M)
        if title == "DecisionDraft":
            return json.dumps({"useful": True, "reason": "r", "record_ids": ids})
        if title == "EffectsDraft":
            return json.dumps({"effects": [{"record_id": i, "effect": "e"} for i in ids]})
        if title == "RubricDraft":
            return json.dumps({"facts": ["f"], "points": ["p"]})
        return "generic"

    llm, model = make_llm(respond)
    llm = StructuredLLM(llm.completer, compact=True)
    query = Query(
        query_id="u/q0", user_id="u", text="hello there", domains=[Category.MUSIC], multi_domain=False
    )
    rubric = asyncio.run(build_rubric(llm, query, _records()))
    assert rubric is not None and len(rubric.evidence.record_ids) == 3
    (effects,) = [
        c.json_schema for c in model.calls if c.json_schema and c.json_schema["title"] == "EffectsDraft"
    ]
    assert effects is not None
    items = effects["properties"]["effects"]
    assert items["minItems"] == items["maxItems"] == 3  # compact used to force exactly 1: always rejected
    assert sorted(items["items"]["properties"]["record_id"]["enum"]) == ["u/r0", "u/r1", "u/r2"]


def test_compact_decoding_comes_from_the_backend_row() -> None:
    assert SessionConfig(model="llamacpp:smollm2-135m").compact_decoding
    assert not SessionConfig(model="openai:gpt-4o-mini").compact_decoding
    assert not SessionConfig(model="nosuchbackend:x").compact_decoding  # fails later, with its own message
    assert SessionConfig(model="openai:x", compact=True).compact_decoding
    assert not SessionConfig(model="llamacpp:x", compact=False).compact_decoding
