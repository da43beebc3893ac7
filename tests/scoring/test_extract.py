"""extract_choice: every accepted form, the precedence rules, and the false positives it must avoid."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recworld.scoring import extract_choice

MCQ = ("A", "B", "C", "D")
MCQ_TEXT = ("Toy Story", "Heat", "Heat 2", "Casino")
HIT = tuple("ABCDEFGHIJ")
HIT_TEXT = (
    "Kolya (1996), Comedy",
    "Fargo (1996), Crime, Drama",
    "Scream (1996), Horror",
    "Contact (1997), Drama, Sci-Fi",
    "Titanic (1997), Drama, Romance",
    "Liar Liar (1997), Comedy",
    "Air Force One (1997), Action",
    "The English Patient (1996), Drama",
    "Star Wars (1977), Sci-Fi",
    "Evita (1996), Drama, Musical",
)

ACCEPTED = [
    # plain and decorated labels
    ("B", 1),
    (" B \n", 1),
    ("B.", 1),
    ("(B)", 1),
    ("[C]", 2),
    ("**B**", 1),
    ("**B.**", 1),
    ("$B$", 1),
    ("\\boxed{B}", 1),
    ("$\\boxed{D}$", 3),
    ("\\boxed{\\text{C}}", 2),
    ("<answer>C</answer>", 2),
    ("Option B", 1),
    ("b", 1),
    # answer cues
    ("Answer: B", 1),
    ("answer: b", 1),
    ("Answer: (C)", 2),
    ("Answer: **D**", 3),
    ("The answer is B.", 1),
    ("The correct answer is option C", 2),
    ("Final answer: D", 3),
    ("I choose B.", 1),
    ("I'd go with D", 3),
    ("My choice is C", 2),
    ("The answer is B because the user likes crime films.", 1),
    ("The answer is A because the user likes animation.", 0),
    ("Answer: A, since it is animated", 0),
    # label with the option's text
    ("B. Heat", 1),
    ("B) Heat", 1),
    ("Answer: B. Heat", 1),
    ("**C. Heat 2**", 2),
    # the option text itself
    ("Heat", 1),
    ("  heat  ", 1),
    ("CASINO", 3),
    ("The user would watch Heat 2 next.", 2),  # "Heat" lies inside "Heat 2"
    ("Toy Story.", 0),
    # the last answer stated wins
    ("Answer: A. Wait, on reflection the answer is C.", 2),
    ("(A) looks plausible but (D) fits better", 3),
    ("**B**\n\nActually, **C**", 2),
    ("<think>maybe A, maybe B</think>\nD", 3),
    # bare label as a word when nothing else is given
    ("I think it's C.", 2),
    ("Probably D, given the history.", 3),
    ("It's A.", 0),
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED)
def test_mcq_forms(text: str, expected: int) -> None:
    assert extract_choice(text, MCQ, MCQ_TEXT) == expected


MISSES = [
    "",
    "   ",
    "A movie about two cops.",  # the article, not option A
    "The answer is A movie about toys",
    "I don't know.",
    "E",  # not one of the four labels
    "Answer: E",
    "Heat or Casino, hard to say",  # two options mentioned
    "A. Toy Story\nB. Heat\nC. Heat 2\nD. Casino",  # an echoed option list
    "(A) Toy Story (B) Heat (C) Heat 2 (D) Casino",
    "**A.** Toy Story **B.** Heat **C.** Heat 2",
    "B or C",  # two bare labels
    "7",  # numbers only count within the label range (4 here)
    "The answer is 1995",
]


@pytest.mark.parametrize("text", MISSES)
def test_mcq_misses(text: str) -> None:
    assert extract_choice(text, MCQ, MCQ_TEXT) is None


HIT_CASES = [
    ("G", 6),
    ("7", 6),
    ("Answer: 7", 6),
    ("Candidate #10", 9),
    ("\\boxed{3}", 2),
    ("**10**", 9),
    ("J", 9),
    ("I", 8),
    ("Answer: I", 8),
    ("I think the answer is E", 4),  # the pronoun "I" is not label I
    ("I would pick H.", 7),
    ("Fargo", 1),  # a fragment found in exactly one option
    ("Star Wars (1977), Sci-Fi", 8),
    ("The user watched many films from 1996 (8 of them).", None),  # numbers in prose never count
    ("Answer: 11", None),
    ("I liked it", None),
    ("Drama", None),  # in several options
]


@pytest.mark.parametrize(("text", "expected"), HIT_CASES)
def test_hit_at_1_forms(text: str, expected: int | None) -> None:
    assert extract_choice(text, HIT, HIT_TEXT) == expected


def test_numeric_labels_are_labels() -> None:
    labels = tuple(str(i) for i in range(1, 11))
    assert extract_choice("Answer: 10", labels, HIT_TEXT) == 9
    assert extract_choice("1", labels, HIT_TEXT) == 0


def test_label_and_conflicting_option_text_is_a_miss() -> None:
    # "B. Toy Story" where Toy Story is A: neither is the answer (first-hour review §1.9: small models
    # prefix "A." by habit, so reading the label made their answers drift to A).
    assert extract_choice("B. Toy Story", MCQ, MCQ_TEXT) is None
    assert extract_choice("Answer: B", MCQ, MCQ_TEXT) == 1  # a stated label alone still reads


def test_empty_labels() -> None:
    assert extract_choice("A", (), ()) is None


@given(
    st.sampled_from(range(4)), st.sampled_from(["{}", "({})", "**{}**", "Answer: {}", "The answer is {}."])
)
def test_every_label_in_every_wrapper(index: int, wrapper: str) -> None:
    assert extract_choice(wrapper.format(MCQ[index]), MCQ, MCQ_TEXT) == index


@given(st.text(alphabet=string.ascii_lowercase + " .,", max_size=60))
def test_lowercase_prose_without_options_is_a_miss(text: str) -> None:
    # Lower-case prose that names no option (a, i excluded as words) must never be read as a choice.
    options = ("Zzzz Qqqq", "Xxxx Wwww", "Vvvv Kkkk", "Jjjj Yyyy")
    if any(w in ("a", "b", "c", "d") for w in text.replace(".", " ").replace(",", " ").split()):
        return
    assert extract_choice(text, MCQ, options) is None


# Echoed option lists, in every form small models produce them: a miss, never option A.
ECHOES = [
    "A. B. C. D.",
    "A. A. B. C. D.",  # the first "A." is part of the echo, not an answer before it
    "A, B, C, D",
    "A; B; C; D",
    "A) B) C)",
    "(A) (B) (C)",
    "[A] [B] [C] [D]",
    "A.\nB.\nC.\nD.",
    "A:\nB:\nC:",
    "A. Toy Story\nB. Heat\nC. Heat 2\nD. Casino",  # letters with their texts
    "A. Toy Story B. Heat C. Heat 2 D. Casino",  # the same on one line
    "A: Toy Story\nB: Heat\nC: Heat 2",
    "**A.** Toy Story **B.** Heat **C.** Heat 2",
    "Toy Story\nHeat\nHeat 2\nCasino",  # one option per line, no letters
    "toy story\n  heat\nCASINO",
    "1. 2. 3. 4.",  # numbered
    "Options:\nA. Toy Story\nB. Heat\nC. Heat 2\nD. Casino\n",
]


@pytest.mark.parametrize("text", ECHOES)
def test_echoed_lists_are_misses(text: str) -> None:
    assert extract_choice(text, MCQ, MCQ_TEXT) is None


HIT_ECHOES = [
    "A. A. B. C. D. E. G. J.",  # SmolLM2's reply in the first-hour review
    "A. B. C. D. E. F. G. H. I. J.",
    "(A) (B) (C) (D) (E) (F) (G) (H) (I) (J)",
    "A, B, C, D, E, F, G, H, I, J",
    "\n".join(f"{label}. {text}" for label, text in zip(HIT, HIT_TEXT, strict=True)),
    "\n".join(HIT_TEXT[:5]),
    "1. 2. 3. 4. 5. 6. 7. 8. 9. 10.",
]


@pytest.mark.parametrize("text", HIT_ECHOES)
def test_echoed_candidate_lists_are_misses(text: str) -> None:
    assert extract_choice(text, HIT, HIT_TEXT) is None


# An echo next to a real answer: the answer stands.
ECHO_AND_ANSWER = [
    ("A. Toy Story\nB. Heat\nC. Heat 2\nD. Casino\n\nAnswer: C", 2),
    ("Options: A. Toy Story B. Heat C. Heat 2 D. Casino\nThe answer is B.", 1),
    ("A. Toy Story is animated. B. Heat is crime. C. Heat 2 is a sequel. The answer is B.", 1),
    ("Not A, not B, not C. Answer: D", 3),
    ("(A) (B) (C) (D)\nI choose D", 3),
    ("Toy Story\nHeat\nHeat 2\nCasino\n\nFinal answer: A", 0),
    # not echoes: two labels, or labels out of order, are reasoning
    ("(A) looks plausible but (D) fits better", 3),
    ("C. Heat 2\n\nExplanation: A. is wrong, B. is wrong", 2),
    ("The answer is (C) because the user likes sequels.", 2),
    ("Answer: B", 1),
    ("B", 1),
    ("B. Heat", 1),
]


@pytest.mark.parametrize(("text", "expected"), ECHO_AND_ANSWER)
def test_an_answer_beside_an_echo_still_counts(text: str, expected: int) -> None:
    assert extract_choice(text, MCQ, MCQ_TEXT) == expected


@given(st.permutations(range(4)).map(lambda p: sorted(p[:3])), st.sampled_from(["{}.", "({})", "{})", "{},"]))
def test_any_ascending_run_of_three_listed_labels_is_an_echo(indices: list[int], form: str) -> None:
    text = " ".join(form.format(MCQ[i]) for i in indices)
    assert extract_choice(text, MCQ, MCQ_TEXT) is None


@given(
    case=st.sampled_from([(MCQ, MCQ_TEXT), (HIT, HIT_TEXT)]).flatmap(
        lambda c: st.tuples(st.just(c), st.integers(0, len(c[0]) - 1), st.integers(0, len(c[0]) - 1))
    ),
    punct=st.sampled_from([". ", ") ", ": "]),
)
def test_an_enumerated_label_with_another_options_text_is_a_miss(
    case: tuple[tuple[tuple[str, ...], tuple[str, ...]], int, int], punct: str
) -> None:
    """ "A. Romance" where Romance is option B reads as neither (the review's drift to A); agreeing reads."""
    (labels, texts), label, text = case
    reply = f"{labels[label]}{punct}{texts[text]}"
    assert extract_choice(reply, labels, texts) == (label if label == text else None)


def test_an_enumerated_label_with_its_reason_still_reads() -> None:
    assert extract_choice("B. because the user likes crime films", MCQ, MCQ_TEXT) == 1
    assert extract_choice("B) Heat, a crime film", MCQ, MCQ_TEXT) == 1
