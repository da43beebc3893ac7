"""Structured calls: schema validation, bounded retries that vary the request, cache resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from lunar_helpers import make_llm

from recworld.lunar.llm import inline_schema, parse_json_object
from recworld.lunar.synth.trajectory import SlotsDraft, WeekDraft
from recworld.models.base import Request


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

    from recworld.lunar.llm import compact_schema
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
    from recworld.lunar.llm import StructuredLLM, compact_schema
    from recworld.lunar.session import SessionConfig

    llm, model = make_llm(lambda r: '{"theme": "ab"}')
    compact = StructuredLLM(llm.completer, max_attempts=1, compact=True)
    assert asyncio.run(compact.structured("plan", WeekDraft, stage="week", key="u")) is None
    assert model.calls[0].json_schema == compact_schema(inline_schema(WeekDraft))
    assert compact.failures and compact.failures[0].stage == "week"  # full pydantic validation still applies
    assert compact.with_system("x").compact
    assert SessionConfig().compact_for("llamacpp:smollm2-135m") and not SessionConfig().compact_for(
        "openai:x"
    )
    assert not SessionConfig(compact=False).compact_for("llamacpp:smollm2-135m")
