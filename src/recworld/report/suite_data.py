"""What analyses read from a run's suite: its dataset, item popularity, questions and NeuMF space.

A run names its suite in ``run.json``; a suite that moved or was deleted
makes those analyses skip with a note, never fail the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, assert_never

import numpy as np

from recworld.data.dataset import Dataset
from recworld.errors import RecWorldError
from recworld.evaluation.questions import load_questions
from recworld.lrworld.catalogue import get_measure
from recworld.lrworld.embeddings import SavedSpace, load_space
from recworld.lrworld.measure import AttributeSpec, MemorySpec, NeuralSpec, NextItemSpec, RuleSpec
from recworld.lrworld.schema import Question
from recworld.report.runs import RunData

__all__ = ["SuiteData", "candidate_scores", "neumf_space", "suite_of"]


@dataclass
class SuiteData:
    """A suite's dataset, loaded once per report, and what analyses derive from it."""

    path: Path
    dataset: Dataset
    _questions: dict[str, Question] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.dataset.name

    def item_counts(self) -> dict[str, int]:
        counts = self.dataset.interactions["item_id"].astype(str).value_counts()
        return {str(k): int(v) for k, v in counts.items()}

    def user_counts(self) -> dict[str, int]:
        """User id -> interactions: a user option's popularity (its activity), never an item's."""
        counts = self.dataset.interactions["user_id"].astype(str).value_counts()
        return {str(k): int(v) for k, v in counts.items()}

    def question(self, question_id: str) -> Question | None:
        """The suite's question (base id), read lazily from its measure's file."""
        if not self._questions:
            for q in load_questions(self.path):
                self._questions[q.id] = q
        return self._questions.get(question_id)

    def users_of(self) -> dict[str, set[str]]:
        """Item id -> the users who had it (binary), for cosine and confidence."""
        frame = self.dataset.interactions
        out: dict[str, set[str]] = {}
        for item, users in frame.groupby(frame["item_id"].astype(str))["user_id"]:
            out[str(item)] = {str(u) for u in users}
        return out

    def items_of(self) -> dict[str, set[str]]:
        frame = self.dataset.interactions
        out: dict[str, set[str]] = {}
        for user, items in frame.groupby(frame["user_id"].astype(str))["item_id"]:
            out[str(user)] = {str(i) for i in items}
        return out


@cache
def _load(path: Path) -> SuiteData | None:
    try:
        return SuiteData(path=path, dataset=Dataset.load(path / "dataset"))
    except (RecWorldError, OSError):
        return None


def suite_of(run: RunData) -> SuiteData | None:
    """The run's suite, or None when ``run.json`` names none or it cannot be read."""
    if run.info is None or not run.info.suite:
        return None
    return _load(Path(run.info.suite).resolve())


def binary_cosine(a: set[str], b: set[str]) -> float:
    return len(a & b) / math.sqrt(len(a) * len(b)) if a and b else 0.0


def candidate_scores(suite: SuiteData, question: Question) -> tuple[str, list[float | None]]:
    """Each candidate's ground-truth score, as the measure's builder family defines it: (name, scores).

    Memory: binary cosine with the target (over users for items, over items
    for users); association rules: the rule's confidence P(candidate | target);
    neural: cosine in the saved NeuMF space; knowledge (attributes, next
    items): 1 for the answer (only the answer is known here).
    """
    ids = [c.id for c in question.candidates]
    spec = get_measure(question.measure).builder
    match spec:
        case RuleSpec():
            users = _users(suite)
            target = users.get(question.target.id, set())
            return "confidence", [
                len(target & users.get(i, set())) / len(target) if target else None for i in ids
            ]
        case MemorySpec(kind=kind):
            vectors = _users(suite) if kind == "item" else _items(suite)
            target = vectors.get(question.target.id, set())
            return "cosine", [binary_cosine(target, vectors.get(i, set())) for i in ids]
        case NeuralSpec():
            return "NeuMF cosine", _neumf_cosines(suite.path, question)
        case AttributeSpec() | NextItemSpec():
            return "is the answer", [1.0 if i == question.answer_index else 0.0 for i in range(len(ids))]
        case _:
            assert_never(spec)


@cache
def _users_cached(path: Path) -> dict[str, set[str]]:
    suite = _load(path)
    return {} if suite is None else suite.users_of()


@cache
def _items_cached(path: Path) -> dict[str, set[str]]:
    suite = _load(path)
    return {} if suite is None else suite.items_of()


def _users(suite: SuiteData) -> dict[str, set[str]]:
    return _users_cached(suite.path)


def _items(suite: SuiteData) -> dict[str, set[str]]:
    return _items_cached(suite.path)


def _neumf_cosines(path: Path, question: Question) -> list[float | None]:
    space = neumf_space(path)
    if space is None:
        return [None] * len(question.candidates)
    user_row = {str(u): i for i, u in enumerate(space.user_ids)}
    item_row = {str(u): i for i, u in enumerate(space.item_ids)}
    if question.target.kind == "user":
        target, table, rows = space.user, space.item, item_row
        t = user_row.get(question.target.id)
    else:
        target, table, rows = space.item, space.user, user_row
        t = item_row.get(question.target.id)
    if t is None:
        return [None] * len(question.candidates)
    out: list[float | None] = []
    for c in question.candidates:
        r = rows.get(c.id)
        out.append(None if r is None else _cos(target[t], table[r]))
    return out


def _cos(a: Any, b: Any) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b) / (na * nb)) if na and nb else 0.0


@cache
def neumf_space(path: Path) -> SavedSpace | None:
    """The suite's saved NeuMF space (:mod:`recworld.lrworld.embeddings`), or None when absent."""
    try:
        return load_space(path)
    except RecWorldError:
        return None
