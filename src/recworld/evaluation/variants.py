"""What a variant changes in the questions asked: option orders, noisy histories, few-shot examples.

The suite's question files are never rewritten: each transform makes seeded
copies in memory, so a variant run is as reproducible and resumable as the
zero-shot one. A copy asked in another option order has the id
``<question id>#o<k>`` (order 0 is the suite's own order and keeps its id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from recworld.lrworld.noise import NoiseCatalogue, noisy_question
from recworld.seeding import rng

if TYPE_CHECKING:
    from recworld.lrworld.schema import Question

__all__ = ["Asked", "few_shot_examples", "noisy_history", "permuted", "prepare"]


@dataclass(frozen=True)
class Asked:
    """One question as it is put to the model: maybe permuted or noised, with its examples."""

    question: Question
    order: int = 0
    examples: tuple[Question, ...] = ()


def permuted(question: Question, order: int, seed: int) -> Question:
    """``question`` with its options in the ``order``-th seeded permutation (0: unchanged)."""
    if order == 0:
        return question
    n = len(question.candidates)
    perm = [int(i) for i in rng(seed, "order", question.id, order).permutation(n)]
    return question.model_copy(
        update={
            "id": f"{question.id}#o{order}",
            "candidates": [question.candidates[i] for i in perm],
            "answer_index": perm.index(question.answer_index),
        }
    )


# The noisy profile lives with the measures (it must show items the way each measure does).
Catalogue = NoiseCatalogue
noisy_history = noisy_question


def _may_show(example: Question, question: Question) -> bool:
    """An example about another target whose answer is none of the question's own options."""
    own = {c.id for c in question.candidates} | {question.target.id}
    return (
        example.id != question.id
        and example.target.id != question.target.id
        and example.answer.id not in own
        and example.target.id not in own
    )


def few_shot_examples(
    question: Question, pool: Sequence[Question], shots: int, seed: int
) -> tuple[Question, ...]:
    """Up to ``shots`` solved questions of the same measure, seeded per question.

    Never the question itself, never one about the same target (user or item),
    and never one whose answer or target is among the question's options.
    """
    same = [q for q in pool if q.measure == question.measure]
    order = rng(seed, "few-shot", question.id).permutation(len(same))
    chosen: list[Question] = []
    for index in order:
        candidate = same[int(index)]
        if _may_show(candidate, question):
            chosen.append(candidate)
            if len(chosen) == shots:
                break
    return tuple(chosen)


def prepare(
    questions: Sequence[Question],
    *,
    variant: str,
    orders: int,
    seed: int,
    suite_dir: Path,
) -> list[Asked]:
    """Every (question, order) the run asks, transformed as ``variant`` says."""
    from recworld.evaluation.questions import load_questions
    from recworld.lrworld.prompts import get_variant

    spec = get_variant(variant)
    base = list(questions)
    if spec.noisy:
        catalogue = Catalogue.of_suite(suite_dir)
        base = [noisy_history(q, catalogue, seed) for q in base]
    pool: list[Question] = []
    if spec.shots:
        pool = load_questions(suite_dir, sorted({q.measure for q in base}))
    asked: list[Asked] = []
    for question in base:
        examples = few_shot_examples(question, pool, spec.shots, seed) if spec.shots else ()
        for order in range(orders):
            asked.append(Asked(permuted(question, order, seed), order, examples))
    return asked
