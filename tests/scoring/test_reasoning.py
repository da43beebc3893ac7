"""Reasoning blocks: stripped before extraction; a reply cut off inside one is a miss."""

from __future__ import annotations

import pytest

from recworld.scoring import extract_choice, strip_reasoning

LABELS = list("ABCD")
TEXTS = ["Alien", "Brazil", "Casablanca", "Dune"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("<think>The user watched Star Wars. Option A is", None),  # cut off mid-thought: a miss
        ("<THINK>A or B?", None),
        ("<think>A fits</think>\nAnswer: C", 2),  # closed: only the answer counts
        ("<think>A</think><think>B</think> D", 3),
        ("the history suggests A</think>\nAnswer: B", 1),  # template opened the block in the prompt
        ("<think>A</think> Answer: B <think>more", None),  # a second block that never closes
    ],
)
def test_reasoning_blocks(reply: str, expected: int | None) -> None:
    assert extract_choice(reply, LABELS, TEXTS) == expected


def test_strip_reasoning_keeps_the_answer_text() -> None:
    assert strip_reasoning("<think>x</think>Answer: B") == "Answer: B"
    assert strip_reasoning("<think>unfinished") is None
    assert strip_reasoning("plain") == "plain"
