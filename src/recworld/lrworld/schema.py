"""The question record: LRWorld's public, versioned suite format.

One JSON object per line in ``questions/<measure>.jsonl``. Field names are a
contract shared with other tools; bump :data:`QUESTION_SCHEMA` on any change.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

QUESTION_SCHEMA = "recworld.question/1"

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


class Entry(BaseModel):
    """An item or user shown to the model: its id and the text that stands for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    text: str


class Target(BaseModel):
    """What a question is about: an item, a user, or a user's next step."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: EntityKind
    id: str
    text: str


class Question(BaseModel):
    """One multiple-choice or HitRatio@1 question with its ground truth."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: Literal["recworld.question/1"] = Field(default="recworld.question/1", alias="schema")
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

    def to_json(self) -> dict[str, Any]:
        """The record as written to disk (``schema`` key, not ``schema_``)."""
        return self.model_dump(mode="json", by_alias=True)
