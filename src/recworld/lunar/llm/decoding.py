"""Decoding schemas and reply parsing for :class:`~recworld.lunar.llm.StructuredLLM`.

The schema sent with a request is a decoding aid (grammar or ``response_format``);
the reply is always validated against the full pydantic model afterwards.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel
from pydantic.config import JsonDict

# The items a list field needs room for under compact decoding (see :func:`room`).
ROOM = "x-compact-items"
# Length and count bounds: dropped from decoding schemas (see inline_schema and compact_schema).
_BOUNDS = ("minLength", "maxLength", "minItems", "maxItems", ROOM)


def room(items: int) -> JsonDict:
    """``json_schema_extra`` of a list field: how many items compact decoding leaves room for.

    Every list field of a Draft that may hold more than one item declares it (tests/lunar/
    test_compact_room.py introspects them all): the number of items one call needs, e.g. the
    facts a batch of records holds. :func:`compact_schema` turns the field into the range
    ``max(minItems, 1) .. min(maxItems, items)``; a model call may still fix an exact count.
    """
    if items < 1:
        raise ValueError("a list field needs room for at least one item")
    return {ROOM: items}


def inline_schema(model: type[BaseModel], *, for_decoding: bool = False) -> dict[str, Any]:
    """The model's JSON schema with every ``$ref`` inlined (grammar converters like flat schemas).

    ``for_decoding`` drops string length bounds: llama.cpp expands ``{0,100}`` into a
    deep grammar that made one small call ~8x slower (153 s vs 19 s measured with
    SmolLM2-135M). Lengths are still enforced when the reply is validated.
    """
    schema = model.model_json_schema()
    defs: Mapping[str, Any] = schema.pop("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if for_decoding:
                node = {k: v for k, v in node.items() if k not in _BOUNDS}
            if "$ref" in node:
                target = resolve(defs[node["$ref"].rsplit("/", 1)[-1]])
                rest = {k: resolve(v) for k, v in node.items() if k != "$ref"}
                return {**target, **rest}
            return {k: resolve(v) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v) for v in node]
        return node

    out: dict[str, Any] = resolve(schema)
    return out


# One word of a compact string: letters, digits, apostrophes, slashes and hyphens (record ids
# such as ``user-000/w0/d0/s0/r0`` fit). Underscores are left out on purpose: greedy SmolLM2
# looped on identifiers like ``deli_restaurant_deli_...`` until the token cap. A word has at
# most WORD_CHARS characters: unbounded, SmolLM2 ran one word to the cap ("number-1222222...",
# 1 of 12 query generations), and a short character-class repetition keeps the grammar flat.
WORD_CHARS = 24
COMPACT_WORD = rf"[A-Za-z0-9'/-]{{1,{WORD_CHARS}}}"
COMPACT_WORDS = 4
_CONSTRAINED = frozenset({"enum", "const", "pattern", "format"})


def compact_schema(schema: Any, *, words: int = COMPACT_WORDS) -> Any:
    """A decoding schema small models finish: short strings and arrays of a fixed length.

    Greedy decoding of a 135M model repeats itself inside an open string or array
    until the token cap. llama.cpp makes ranges expensive (``{0,60}`` nests a rule
    per step; 153 s vs 19 s measured), but exact counts and a few optional words
    stay flat and cheap. So every free string becomes at most ``words`` words of
    :data:`COMPACT_WORD` (at most :data:`WORD_CHARS` characters each; the ``?`` groups are
    flat). An array with an exact count (``minItems == maxItems``: a per-call count, a
    grammar branch) keeps it; any other gets ``max(minItems, 1)`` up to the room its field
    declares (:func:`room`, capped by ``maxItems``; 1 when undeclared), a handful of flat
    optional items.

    Invariant: every array whose schema allows k > 1 items and declares room r can hold
    min(k, r) items after compaction, and every count it allows is one the full schema
    allows. The decoded language is a subset of what the pydantic model accepts; the
    reply is still validated against the full model.
    """
    if isinstance(schema, list):
        return [compact_schema(v, words=words) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: compact_schema(v, words=words) for k, v in schema.items() if k not in _BOUNDS}
    if schema.get("type") == "string" and not _CONSTRAINED & schema.keys():
        out["pattern"] = "^" + COMPACT_WORD + f"( {COMPACT_WORD})?" * (words - 1) + "$"
    if schema.get("type") == "array":
        out["minItems"], out["maxItems"] = compact_items(schema)
    return out


def compact_items(schema: Mapping[str, Any]) -> tuple[int, int]:
    """The (minItems, maxItems) an array schema gets under :func:`compact_schema`."""
    low, high = schema.get("minItems"), schema.get("maxItems")
    if low is not None and low == high:
        return int(low), int(low)
    lo = max(int(low or 0), 1)
    cap = int(schema.get(ROOM, 1))
    if high is not None:
        lo, cap = min(lo, int(high)), min(cap, int(high))
    return lo, max(lo, cap)


def narrow_schema(schema: Mapping[str, Any], enums: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """A copy of ``schema`` whose string fields at the given paths may only take the listed values.

    A path is dotted property names from the root (``"record_ids"``, ``"effects.record_id"``);
    arrays are passed through to their items, so the enum lands on the strings themselves.
    This is a decoding aid only: small models invent ids that look right, and an enum of the
    ids actually shown in the prompt lets grammar/``response_format`` decoding emit only those.
    An empty value list is skipped (an empty enum would make the schema unsatisfiable).
    """
    out: dict[str, Any] = json.loads(json.dumps(schema))
    for path, values in enums.items():
        if not values:
            continue
        node = _at(out, path)
        while node.get("type") == "array":
            node = node["items"]
        if node.get("type") != "string":
            raise TypeError(f"field {path!r} is not a string or an array of strings")
        node["enum"] = list(dict.fromkeys(values))
    return out


def _at(schema: dict[str, Any], path: str) -> dict[str, Any]:
    """The node at a dotted path of property names; arrays on the way pass through to their items."""
    node = schema
    for name in path.split("."):
        while node.get("type") == "array":
            node = node["items"]
        props = node.get("properties", {})
        if name not in props:
            raise KeyError(f"schema {schema.get('title')!r} has no field {path!r}")
        node = props[name]
    return node


def fix_lengths(schema: Mapping[str, Any], lengths: Mapping[str, int]) -> dict[str, Any]:
    """A copy of ``schema`` whose arrays at the given paths have exactly that many items.

    A per-call count the reply must meet (one decision per new fact, one effect per
    evidence record) is cheap for a grammar as an exact count, and kept by
    :func:`compact_schema`; ranges are what the decoding schemas leave out.
    """
    out: dict[str, Any] = json.loads(json.dumps(schema))
    for path, n in lengths.items():
        node = _at(out, path)
        if node.get("type") != "array":
            raise TypeError(f"field {path!r} is not an array")
        node["minItems"] = node["maxItems"] = max(int(n), 0)
    return out


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_json_object(text: str) -> Any:
    """The first JSON object in ``text`` (tolerates code fences and chatter around it)."""
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start = body.find("{")
    if start < 0:
        raise ValueError("no JSON object in the reply")
    obj, _ = json.JSONDecoder().raw_decode(body[start:])
    return obj
