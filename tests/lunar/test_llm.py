"""Structured calls: schema validation, bounded retries that vary the request, cache resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from helpers.lunar import lunar_responder, make_llm
from recworld.chat import Request
from recworld.lunar.llm.decoding import inline_schema, parse_json_object
from recworld.lunar.synth.trajectory import SlotsDraft, WeekDraft


def test_parse_json_object_tolerates_fences_and_chatter() -> None:
    assert parse_json_object('Sure!\n```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_object('x {"a": {"b": 2}} y') == {"a": {"b": 2}}


def test_inline_schema_has_no_refs() -> None:
    text = json.dumps(inline_schema(SlotsDraft))
    assert "$ref" not in text and "$defs" not in text
    assert '"additionalProperties": false' in text and '"maxItems"' in text
    decoding = json.dumps(inline_schema(SlotsDraft, for_decoding=True))
    assert "maxLength" not in decoding and "maxItems" not in decoding and '"pattern"' in decoding


def test_invalid_then_valid_retries_with_a_different_request() -> None:
    replies = iter(['{"theme": "a calm week"}', '{"theme": "busy week", "rhythm": "gym daily"}'])
    llm, model = make_llm(lambda r: next(replies))
    value = asyncio.run(llm.structured("plan", WeekDraft, stage="week", key="u"))
    assert value == WeekDraft(theme="busy week", rhythm="gym daily")
    assert len(model.calls) == 2
    first, second = (c.messages[-1].content for c in model.calls)
    assert first != second and "Attempt 2" in second and "rhythm" in second and "Field required" in second
    assert model.calls[0].json_schema is not None and model.calls[0].json_schema["title"] == "WeekDraft"
    assert llm.failures == []


def test_bounded_retries_record_failure_and_continue() -> None:
    llm, model = make_llm(lambda r: "never json", max_attempts=3)
    assert asyncio.run(llm.structured("plan", WeekDraft, stage="week", key="u7")) is None
    assert len(model.calls) == 3
    assert [(f.stage, f.key, f.attempts) for f in llm.failures] == [("week", "u7", 3)]


def test_check_rejection_counts_as_invalid() -> None:
    llm, model = make_llm(lambda r: '{"theme": "aaa", "rhythm": "bbb"}', max_attempts=2)
    out = asyncio.run(llm.structured("p", WeekDraft, stage="s", key="k", check=lambda d: "no"))
    assert out is None and len(model.calls) == 2 and llm.failures[0].error == "no"


def test_rerun_hits_the_cache(tmp_path: Path) -> None:
    replies = ['{"bad": 1}', '{"theme": "aaa", "rhythm": "bbb"}']

    def respond(request: Request) -> str:
        return replies[1] if "Attempt 2" in request.messages[-1].content else replies[0]

    for expected_calls in (2, 0):
        llm, model = make_llm(respond, tmp_path)
        assert asyncio.run(llm.structured("p", WeekDraft, stage="s", key="k")) is not None
        assert len(model.calls) == expected_calls


def test_compact_schema_bounds_strings_and_fixes_array_lengths() -> None:
    import re

    from recworld.lunar.llm.decoding import compact_schema
    from recworld.lunar.synth.profile import ProfileDraft

    schema = compact_schema(inline_schema(ProfileDraft))
    text = json.dumps(schema)
    assert "minLength" not in text and "maxLength" not in text
    affinities = schema["properties"]["affinities"]
    assert affinities["minItems"] == affinities["maxItems"] == 3  # min_length=3 of the draft
    item = affinities["items"]["properties"]
    assert item["preferences"]["minItems"] == item["preferences"]["maxItems"] == 1
    assert "pattern" not in item["category"] and "enum" in item["category"]  # enums untouched
    words = re.compile(item["preferences"]["items"]["pattern"])
    assert words.match("Cantonese cuisine") and words.match("user-000/w0/d0/s0/r0")
    assert not words.match("one two three four five") and not words.match("deli_restaurant")
    # Existing patterns (HH:MM) are kept, not replaced.
    slot = compact_schema(inline_schema(SlotsDraft))["properties"]["slots"]["items"]["properties"]
    assert (
        slot["start"]["pattern"]
        == SlotsDraft.model_json_schema()["$defs"]["SlotDraft"]["properties"]["start"]["pattern"]
    )


def test_compact_llm_sends_the_compact_schema_and_still_validates() -> None:
    from recworld.lunar.llm import StructuredLLM
    from recworld.lunar.llm.config import SessionConfig
    from recworld.lunar.llm.decoding import compact_schema

    llm, model = make_llm(lambda r: '{"theme": "ab"}')
    compact = StructuredLLM(llm.completer, max_attempts=1, compact=True)
    assert asyncio.run(compact.structured("plan", WeekDraft, stage="week", key="u")) is None
    assert model.calls[0].json_schema == compact_schema(inline_schema(WeekDraft))
    assert compact.failures and compact.failures[0].stage == "week"  # full pydantic validation still applies
    assert compact.with_system("x").compact
    assert SessionConfig(model="llamacpp:smollm2-135m").compact_decoding
    assert not SessionConfig(model="openai:x").compact_decoding
    assert not SessionConfig(model="llamacpp:smollm2-135m", compact=False).compact_decoding
    assert SessionConfig(model="openai:x", compact=True).compact_decoding


def test_narrow_schema_puts_enums_on_strings_through_arrays() -> None:
    from recworld.lunar.llm.decoding import narrow_schema
    from recworld.lunar.queries.rubrics import DecisionDraft, EffectsDraft

    base = inline_schema(DecisionDraft, for_decoding=True)
    narrowed = narrow_schema(base, {"record_ids": ["a", "b", "a"]})
    assert narrowed["properties"]["record_ids"]["items"]["enum"] == ["a", "b"]
    assert "enum" not in base["properties"]["record_ids"]["items"]  # the input is not mutated
    nested = narrow_schema(inline_schema(EffectsDraft), {"effects.record_id": ["x"]})
    assert nested["properties"]["effects"]["items"]["properties"]["record_id"]["enum"] == ["x"]
    assert narrow_schema(base, {"record_ids": []}) == base  # an empty enum would be unsatisfiable
    with pytest.raises(KeyError, match="nope"):
        narrow_schema(base, {"nope": ["a"]})
    with pytest.raises(TypeError, match="useful"):
        narrow_schema(base, {"useful": ["a"]})


def test_rubric_decoding_schema_enumerates_the_shown_record_ids() -> None:
    from recworld.lunar.llm.decoding import compact_schema
    from recworld.lunar.queries.rubrics import build_rubric
    from recworld.lunar.schemas import BehaviourRecord, Query

    # The model invents an id in its first decision reply; validation must still reject it.
    invented: set[str] = set()

    def respond(request: Request) -> str:
        schema = request.json_schema
        if schema is None:
            return "A generic answer."
        if schema["title"] == "DecisionDraft" and not invented:
            invented.add("done")
            return json.dumps({"useful": True, "reason": "r", "record_ids": ["user-000/w9/d9/s9/r9"]})
        return lunar_responder()(request)

    records = [
        BehaviourRecord(
            record_id=f"u/w0/d0/s0/r{i}",
            user_id="u",
            timestamp=1_700_000_000 + 60 * i,
            domain=domain,
            type=kind,
            fields={"merchant": f"m{i}"},
        )
        for i, (domain, kind) in enumerate([("dining", "order"), ("dining", "visit"), ("movies", "watch")])
    ]
    query = Query(query_id="q0", user_id="u", text="Where to eat?", domains=["dining"], multi_domain=False)
    for compact in (False, True):
        invented.clear()
        llm, model = make_llm(respond)
        llm.compact = compact
        rubric = asyncio.run(build_rubric(llm, query, records))
        assert rubric is not None and rubric.evidence.record_ids
        decisions = [c for c in model.calls if c.json_schema and c.json_schema["title"] == "DecisionDraft"]
        enums = {
            tuple(c.json_schema["properties"]["record_ids"]["items"]["enum"])  # type: ignore[index]
            for c in decisions
        }
        assert enums == {("u/w0/d0/s0/r0", "u/w0/d0/s0/r1"), ("u/w0/d0/s0/r2",)}
        # The invented id was sent back for a retry: decoding narrowed, validation unchanged.
        assert len(decisions) == 3 and any("unknown record ids" in c.messages[-1].content for c in decisions)
        effects = next(c for c in model.calls if c.json_schema and c.json_schema["title"] == "EffectsDraft")
        assert effects.json_schema is not None
        item = effects.json_schema["properties"]["effects"]["items"]["properties"]["record_id"]
        assert sorted(item["enum"]) == sorted(rubric.evidence.record_ids)
        if compact:  # compact decoding keeps the enum rather than replacing it with a word pattern
            assert "pattern" not in item
            assert compact_schema(effects.json_schema) == effects.json_schema
