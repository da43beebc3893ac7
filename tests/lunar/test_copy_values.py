"""The copy metric measures information: value recall, value precision, facts per record (review U7).

Checked against a brute-force checker written here from the rule in
recworld.lunar.contexts.copies (no code shared): keep only ASCII letters and digits of
the lower-cased, accent-stripped text, then compare every window of the value's length.
"""

from __future__ import annotations

import string
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.lunar.contexts.copies import copy_distance

KEEP = set(string.ascii_lowercase + string.digits)


def _letters(text: str) -> str:
    out = []
    for ch in unicodedata.normalize("NFKD", text.lower()):
        if ch in KEEP:
            out.append(ch)
    return "".join(out)


def _found(value: str, text: str) -> bool:
    v, t = _letters(value), _letters(text)
    return any(t[i : i + len(v)] == v for i in range(len(t) - len(v) + 1))


def _brute(facts: list[tuple[str, str]], values: dict[str, list[object]]) -> tuple[list[float], float]:
    recall = []
    for user in sorted(values):
        distinct = {_letters(str(v)) for v in values[user] if not isinstance(v, bool)}
        distinct = {d for d in distinct if len(d) >= 3}
        if distinct:
            hit = {d for d in distinct if any(_found(d, f) for u, f in facts if u == user)}
            recall.append(len(hit) / len(distinct))
    grounded = 0
    for user, fact in facts:
        vs = [v for v in values.get(user, []) if not isinstance(v, bool) and len(_letters(str(v))) >= 3]
        grounded += any(_found(str(v), fact) for v in vs)
    return recall, grounded / len(facts)


VALUES = st.sampled_from(["vegetarian", "Iron Temple", "Café Nero", "12.50", "ok", True, 7, "carnivore"])
GLUE = st.sampled_from(["", " ", "-", "The user's preferences are", "likes ", "at ", ".", "VEGE"])


@st.composite
def _case(draw: st.DrawFn) -> tuple[list[tuple[str, str]], dict[str, list[object]]]:
    users = ["u0", "u1"]
    values = {u: draw(st.lists(VALUES, min_size=0, max_size=5)) for u in users}
    facts = []
    for _ in range(draw(st.integers(1, 6))):
        user = draw(st.sampled_from(users))
        parts = draw(st.lists(st.one_of(GLUE, VALUES.map(str)), min_size=1, max_size=4))
        text = "".join(parts)
        facts.append((user, text.upper() if draw(st.booleans()) else text))
    return facts, values


@settings(max_examples=100, deadline=None)
@given(case=_case())
def test_value_measures_agree_with_a_brute_force_checker(
    case: tuple[list[tuple[str, str]], dict[str, list[object]]],
) -> None:
    facts, values = case
    lines = {u: [f"- line {i}" for i in range(len(vs) or 1)] for u, vs in values.items()}
    got = copy_distance(facts, lines, values)
    recall, precision = _brute(facts, values)
    if recall:
        assert got.value_recall is not None
        assert abs(got.value_recall.mean - sum(recall) / len(recall)) < 1e-9
        assert abs(got.value_recall.max - max(recall)) < 1e-9
    else:
        assert got.value_recall is None
    assert got.value_precision is not None and abs(got.value_precision - precision) < 1e-9
    assert got.facts_per_record == len(facts) / sum(len(v) for v in lines.values())


def test_glued_tokens_count_as_naming_the_value() -> None:
    """The review's Qwen facts: overlap 0, yet they name the diet."""
    facts = [("u", "The user's preferences arevegetarian-based"), ("u", "The user likes mornings")]
    values: dict[str, list[object]] = {"u": ["vegetarian", "carnivore", "Iron Temple", "ok"]}
    got = copy_distance(facts, {"u": ["- 12:15 dining/order diet=vegetarian"] * 4}, values)
    assert got.value_recall is not None and got.value_recall.mean == 1 / 3  # "ok" is too short to count
    assert got.value_precision == 0.5 and got.facts_per_record == 0.5
