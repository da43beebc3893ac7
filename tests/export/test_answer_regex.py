"""The exported answer regex reads replies as recworld's extractor does, except where documented."""

from __future__ import annotations

import re

import pytest

from recworld.export.answer_regex import answer_pattern
from recworld.scoring.extract import extract_choice

LABELS = ("A", "B", "C", "D")


def read_label(pattern: str, text: str) -> str | None:
    """The label ``pattern`` reads from ``text`` (upper-cased), as lm-eval's filter would; None: a miss."""
    match = re.search(pattern, text)
    if match is None:
        return None
    found = next((g for g in match.groups() if g), None)
    return found.upper() if found else None


OPTIONS = ("Comedy", "Thriller", "Crime", "Adventure")

AGREE = [
    "B",
    "B.",
    "(B)",
    "**B**",
    "\\boxed{B}",
    "The answer is B.",
    "Answer: c",
    "answer: (D)",
    "I choose C because it fits.",
    "Option D",
    "Answer: A ... on reflection, the answer is C",
    "B. Thriller",
    "I think it's C.",
    " C\n\nExplanation: the user watched crime films.",
    "A movie about crime, so the answer is C",
    "I think so",  # a miss for both
    "",
]

# Documented differences: a regex has no option-text tier, no numbers and no echo detection.
DIFFER = {
    "Thriller": (1, None),
    "Answer: 2": (1, None),
    "(A) Comedy (B) Thriller (C) Crime": (None, "C"),
}


@pytest.mark.parametrize("reply", AGREE)
def test_regex_agrees_with_extractor(reply: str) -> None:
    expected = extract_choice(reply, LABELS, OPTIONS)
    got = read_label(answer_pattern(LABELS), reply)
    assert got == (None if expected is None else LABELS[expected])


@pytest.mark.parametrize(("reply", "expected"), sorted(DIFFER.items()))
def test_documented_differences(reply: str, expected: tuple[int | None, str | None]) -> None:
    ours, regex = expected
    assert extract_choice(reply, LABELS, OPTIONS) == ours
    assert read_label(answer_pattern(LABELS), reply) == regex


def test_ten_option_labels_and_bad_labels() -> None:
    pattern = answer_pattern(tuple("ABCDEFGHIJ"))
    assert read_label(pattern, "The answer is J") == "J"
    assert read_label(pattern, "I think the answer is H") == "H"
    assert read_label(answer_pattern(LABELS), "The answer is J") is None
    with pytest.raises(ValueError, match="single letters"):
        answer_pattern(("1", "2"))
