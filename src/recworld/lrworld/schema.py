"""The question record (LRWorld's versioned suite format) and the public view a model is shown.

One JSON object per line in ``questions/<measure>.jsonl``. Field names are a
contract shared with other tools; bump :data:`QUESTION_SCHEMA` on any change.

Invariant (the gold never leaves the scorer): a model is handed a
:class:`PublicQuestion`, never a :class:`Question`, and a public question is a
function of the prompt-side fields alone (ids, measure, format, target,
history, candidates in the order shown): two questions that differ only in
their answer index or their builder evidence have equal public views. The type
has no answer index, no answer, no evidence and no build seed, and
:class:`recworld.chat.Request` refuses any question object that is not such a
view. ``tests/evaluation/test_gold_free.py`` attacks it with generated
questions, every backend kind, and a model that searches its whole request.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, model_validator

from recworld.records import FrozenRecord

QUESTION_SCHEMA: Literal["recworld.question/1"] = "recworld.question/1"

# What a question's target (and a family's candidates) can be.
EntityKind = Literal["item", "user"]


class QuestionFormat(StrEnum):
    HIT_AT_1 = "hit@1"  # 1 positive + 9 negatives; HitRatio@1
    MCQ = "mcq"  # 1 correct + 3 distractors; accuracy
    HIT_AT_1_OF_20 = "hit@1/20"  # LLaRA's LastFM protocol (paper §5.5): 1 positive + 19 negatives

    @property
    def n_options(self) -> int:
        return {"hit@1": 10, "mcq": 4, "hit@1/20": 20}[self.value]

    @property
    def chance(self) -> float:
        return 1.0 / self.n_options


class Entry(FrozenRecord):
    """An item or user shown to the model: its id and the text that stands for it."""

    id: str
    text: str


class Target(FrozenRecord):
    """What a question is about: an item, a user, or a user's next step."""

    kind: EntityKind
    id: str
    text: str


class PublicQuestion(FrozenRecord):
    """What a model may see of a question: what the prompt shows, and the ids a recommender joins on.

    No answer index, no answer, no evidence (see the module's invariant). The
    candidates are in the order shown; the structure a baseline needs beyond
    them (interactions, item fields, the build's settings) comes from the
    suite's dataset and manifest, as any recommender would get it.
    """

    id: str
    dataset: str
    domain: str
    measure: str
    scale: str
    format: QuestionFormat
    target: Target
    history: tuple[Entry, ...] = ()
    candidates: tuple[Entry, ...]

    @property
    def gold_free(self) -> Literal[True]:
        """The mark :class:`recworld.chat.Request` checks: this record carries no gold."""
        return True


class Question(FrozenRecord):
    """One multiple-choice or HitRatio@1 question with its ground truth."""

    schema_id: Literal["recworld.question/1"] = Field(default=QUESTION_SCHEMA, alias="schema")
    id: str
    dataset: str
    domain: str
    measure: str
    scale: str
    format: QuestionFormat
    target: Target
    history: list[Entry] = Field(default_factory=list)
    candidates: list[Entry]
    answer_index: int
    evidence: dict[str, Any] = Field(default_factory=dict)
    seed: int

    @model_validator(mode="after")
    def _check_options(self) -> Question:
        n = self.format.n_options
        if len(self.candidates) != n:
            raise ValueError(f"{self.format.value} needs {n} candidates, got {len(self.candidates)}")
        ids = [c.id for c in self.candidates]
        if len(set(ids)) != len(ids):
            raise ValueError("candidate ids are not unique")
        if not 0 <= self.answer_index < n:
            raise ValueError(f"answer_index {self.answer_index} out of range")
        return self

    @property
    def answer(self) -> Entry:
        return self.candidates[self.answer_index]

    @property
    def public(self) -> PublicQuestion:
        """The view a model is shown: new entries, so nothing in it refers back to this record."""
        return PublicQuestion(
            id=self.id,
            dataset=self.dataset,
            domain=self.domain,
            measure=self.measure,
            scale=self.scale,
            format=self.format,
            target=Target(kind=self.target.kind, id=self.target.id, text=self.target.text),
            history=tuple(Entry(id=e.id, text=e.text) for e in self.history),
            candidates=tuple(Entry(id=c.id, text=c.text) for c in self.candidates),
        )
