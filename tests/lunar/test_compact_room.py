"""Compact decoding leaves room for the items a call needs (review U6, U14).

Invariant (recworld.lunar.llm.decoding.compact_schema): every array whose schema allows
k > 1 items and declares room r can hold min(k, r) items after compaction, and every count
it allows is one the full schema allows. Checked over every Draft the package defines
(introspected, so a new Draft is checked without being listed) and over generated schemas.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from recworld import lunar
from recworld.lunar.judges.privacy import PrivacyDraft, consistent_grammar
from recworld.lunar.llm.decoding import ROOM, compact_schema, inline_schema
from recworld.records import Draft


def _drafts() -> list[type[Draft]]:
    for info in pkgutil.walk_packages(lunar.__path__, "recworld.lunar."):
        importlib.import_module(info.name)

    def below(cls: type[Draft]) -> Iterator[type[Draft]]:
        for sub in cls.__subclasses__():
            yield sub
            yield from below(sub)

    return sorted(
        {d for d in below(Draft) if d.__module__.startswith("recworld.lunar.")},
        key=lambda d: (d.__module__, d.__name__),
    )


def _arrays(full: Any, compact: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Each array node of ``full`` with its counterpart in ``compact`` (same shape, walked together)."""
    if isinstance(full, dict):
        if full.get("type") == "array":
            yield path, full, compact
        for key, value in full.items():
            if key in compact:  # the bounds compaction drops are not walked
                yield from _arrays(value, compact[key], f"{path}.{key}")
    elif isinstance(full, list):
        for i, value in enumerate(full):
            yield from _arrays(value, compact[i], f"{path}[{i}]")


def _check(path: str, full: dict[str, Any], compact: dict[str, Any]) -> None:
    k = full.get("maxItems", float("inf"))
    low = full.get("minItems", 0)
    lo, hi = compact["minItems"], compact["maxItems"]
    assert ROOM not in compact, path  # the room is an instruction to compact_schema, never sent
    assert low <= lo <= hi <= k, (path, low, lo, hi, k)  # only counts the full schema accepts
    if low == k:
        assert lo == hi == low, path  # an exact count stays exact
        return
    assert ROOM in full, f"{path}: a list that may hold {k} items declares its compact room"
    assert hi >= min(k, full[ROOM]), (path, hi, k, full[ROOM])


def test_every_draft_list_has_the_room_it_declares() -> None:
    drafts = _drafts()
    assert len(drafts) >= 25  # the introspection found the package's drafts
    seen = 0
    for draft in drafts:
        full = inline_schema(draft)
        for path, node, small in _arrays(full, compact_schema(full)):
            _check(f"{draft.__name__}{path}", node, small)
            seen += 1
    assert seen >= 15


def test_the_privacy_grammar_decodes_zero_to_eight_items_with_consistent_scores() -> None:
    full = inline_schema(PrivacyDraft)
    none, some = compact_schema(consistent_grammar(full))["anyOf"]
    assert none["properties"]["offences"]["maxItems"] == 0 and none["properties"]["score"]["enum"] == [5]
    offences = some["properties"]["offences"]
    assert (offences["minItems"], offences["maxItems"]) == (1, 8)  # two severe items: score 1 decodable
    assert some["properties"]["score"]["enum"] == [1, 2, 3, 4]


@st.composite
def _array_schema(draw: st.DrawFn) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
    low = draw(st.none() | st.integers(0, 12))
    high = draw(st.none() | st.integers(0, 12))
    if low is not None and high is not None and low > high:
        low, high = high, low
    if low is not None:
        node["minItems"] = low
    if high is not None:
        node["maxItems"] = high
    if draw(st.booleans()):
        node[ROOM] = draw(st.integers(1, 12))
    return node


@settings(max_examples=300, deadline=None)
@given(node=_array_schema(), nested=st.booleans())
def test_compaction_keeps_room_for_generated_arrays(node: dict[str, Any], nested: bool) -> None:
    full = {"type": "object", "properties": {"xs": {**node, "items": node}}} if nested else node
    for path, array, small in _arrays(full, compact_schema(full)):
        k = array.get("maxItems", float("inf"))
        if array.get("minItems", 0) != k and ROOM not in array:
            assert small["maxItems"] >= min(k, 1)  # undeclared: one item, as before
            continue
        _check(path, array, small)
