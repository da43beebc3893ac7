"""Lone UTF-16 surrogates read back from disk are one DataError, never a later crash.

Invariant (``recworld.io.jsonl.parse_json``): whatever JSON text it returns a
value for, that value encodes as UTF-8, so a journal or any writer can store it.
The checker below is ``str.encode`` over a walk of our own, not the module's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.errors import DataError
from recworld.io import Journal, parse_json

# A piece of a JSON string literal: plain text, a valid pair, or a lone half in either order.
_PIECES = st.sampled_from(
    ["a", "é", "\\ud83d\\ude00", "\\ud800", "\\uDFFF", "\\uDBFF x", "\\u0041", "\\ud83d"]
)


def _utf8_ok(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_utf8_ok(k) and _utf8_ok(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_utf8_ok(v) for v in value)
    return True


@settings(max_examples=200, deadline=None)
@given(key=st.lists(_PIECES, max_size=3), value=st.lists(_PIECES, max_size=4), nested=st.booleans())
def test_parse_json_returns_only_encodable_text(key: list[str], value: list[str], nested: bool) -> None:
    literal = '"' + "".join(value) + '"'
    text = '{"' + "".join(key) + '": ' + (f"[{literal}]" if nested else literal) + "}"
    try:
        parsed = parse_json(text, path="planted.jsonl", line=3)
    except DataError as exc:
        assert "planted.jsonl" in str(exc)
        assert "surrogate" in str(exc)
        return
    assert _utf8_ok(parsed)


def test_a_planted_surrogate_line_in_a_journal_is_named(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    good = json.dumps({"id": "q1", "answer": "A"})
    path.write_text(good + "\n" + '{"id": "q2", "answer": "\\ud800"}\n' + good + "\n")
    with pytest.raises(DataError, match=r"samples\.jsonl.*2|2.*samples\.jsonl"):
        Journal(path, "id").load()


def test_strict_json_writers_refuse_nan(tmp_path: Path) -> None:
    from recworld.io import atomic_write_json, dumps_canonical

    with pytest.raises(ValueError):
        dumps_canonical({"x": float("nan")})
    with pytest.raises(ValueError):
        atomic_write_json(tmp_path / "m.json", {"x": float("inf")})
    assert not (tmp_path / "m.json").exists()
