"""Attribute MCQs (``kg_*``, ``taxo_*``, ``lastfm_artist_genre``): name an attribute of the next item.

Ground truth (paper §3 f-h, leave-one-out with a sliding window): for a flat
position ``p`` in a user's time-ordered history with at least ``min_history``
earlier items, the item at ``p`` is the next item and the up to
``history_length`` items before it are shown. The question asks for a value
of one field of the next item.

* The correct option is drawn uniformly from the next item's eligible values
  (all genres; the first ``lead`` cast members; the root, the leaf, or the
  category at depth ``taxo_level`` of the category path), not always the first
  listed one, so that "the primary genre" is not the answer by construction.
* ``taxo_interm`` asks for one level: depth ``taxo_level`` (default 1, directly
  under the root as in the paper's Figure 2), on items whose path goes deeper
  (so the value is an intermediate, not the leaf). Its wrong options are
  values seen at that same depth.
* The next item is the next *event*: every item the user has at that
  timestamp (:mod:`recworld.lrworld.ties`; one item unless tied in time). Any
  eligible value of any of them may be the answer, drawn uniformly from their
  union, and no value any of them has is a distractor (:func:`event_values`),
  so no answer or distractor depends on how same-time items were sorted.
  The history ends before the event and starts at a time boundary.
* Windows with an event item already in the shown history, or a variant of a
  shown item (same folded title), are skipped: the answer would be on screen.
* History lines show each item's full text (``history_text="text"``, the
  paper's: title, year and genres, or brand and leaf category, so the asked
  value is often on screen) or its title only (``"title"``).
* Distractors are three values of the same kind (same taxonomy level) that
  the next item does not have at all (no value anywhere on its path, compared
  case- and space-folded, so "black" is no distractor to "Black"), drawn
  uniformly (``distractors``, the paper's default) or by popularity (how often
  users met items carrying the value), which follows the same prior as the
  answers, so "pick the most common value" gains little.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from recworld.lrworld.builders.base import QuestionMaker, draw_distinct, record_window, sliding_windows
from recworld.lrworld.context import BuildContext
from recworld.lrworld.measure import Level, Measure
from recworld.lrworld.options import OptionGuard
from recworld.lrworld.schema import Entry, Question, Target


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    return [str(v) for v in value if v is not None and str(v) != ""]


@dataclass(frozen=True)
class _ValueTable:
    vocabulary: list[str]
    answers: list[np.ndarray]  # per item: value ids that may be the correct option
    owned: list[set[int]]  # per item: value ids it has (never distractors)
    owned_texts: list[list[str]]  # per item: every value it has, as text (none may be read again)
    weights: np.ndarray  # per value id: sampling weight of a distractor


@dataclass(frozen=True)
class AttributeBuilder:
    field: str
    level: Level = "all"
    lead: int | None = None  # only the first `lead` values may be the answer (top-billed cast)

    def _split(self, values: Sequence[str], depth: int) -> list[str]:
        if self.level == "root":
            return list(values[:1])
        if self.level == "leaf":
            return list(values[-1:]) if len(values) >= 2 else []
        if self.level == "interm":
            return list(values[depth : depth + 1]) if len(values) > depth + 1 else []
        return list(values[: self.lead] if self.lead else values)

    def _table(self, ctx: BuildContext) -> _ValueTable:
        raw = [_as_list(v) for v in ctx.field_values(self.field)]
        eligible = [self._split(values, ctx.config.taxo_level) for values in raw]
        vocabulary = sorted({v for values in eligible for v in values})
        ids = {v: i for i, v in enumerate(vocabulary)}
        weights = np.zeros(len(vocabulary), dtype=np.float64)
        degree = ctx.item_degree
        for item, values in enumerate(eligible):
            for v in set(values):
                weights[ids[v]] += degree[item]
        if ctx.config.distractors == "uniform" or not weights.any():
            weights = np.ones(len(vocabulary), dtype=np.float64)
        return _ValueTable(
            vocabulary=vocabulary,
            answers=[np.asarray(sorted({ids[v] for v in values}), dtype=np.int64) for values in eligible],
            owned=[{ids[v] for v in values if v in ids} for values in raw],
            owned_texts=raw,
            weights=np.maximum(weights, 1e-12),
        )

    def unavailable(self, ctx: BuildContext) -> str | None:
        table = self._table(ctx)
        if len(table.vocabulary) < 4:
            return f"field {self.field!r} ({self.level}) has {len(table.vocabulary)} distinct values, need 4"
        return None

    def build(self, ctx: BuildContext, measure: Measure, rng: np.random.Generator) -> list[Question]:
        table = self._table(ctx)
        n_distractors = measure.format.n_options - 1
        size = len(table.vocabulary)
        next_ok = np.array(
            [
                len(a) > 0 and size - len(o) >= n_distractors
                for a, o in zip(table.answers, table.owned, strict=True)
            ],
            dtype=bool,
        )
        seq = ctx.sequences
        windows = ctx.windows(seq, next_ok, measure.id)
        pool = np.arange(size, dtype=np.int64)
        maker = QuestionMaker(ctx, measure)
        view = ctx.config.history_text
        for window in sliding_windows(ctx, seq, windows, rng, maker):
            user, shown = window.user, window.shown
            answers, owned, owned_texts = event_values(table, window.event)
            if len(answers) == 0:
                maker.drop("no_value")
                continue
            answer = int(answers[rng.integers(len(answers))])
            item = next(int(j) for j in window.event if answer in table.answers[int(j)])
            guard = OptionGuard(table.vocabulary.__getitem__, owned_texts)
            distractors = draw_distinct(rng, pool, n_distractors, owned, table.weights, guard)
            if distractors is None:
                maker.drop("too_few_distractors")
                continue
            user_id = str(ctx.matrix.user_ids[user])
            added = maker.add(
                rng,
                target=Target(kind="user", id=user_id, text=f"user {user_id}"),
                history=[ctx.history_entry(int(j), view) for j in shown],
                positive=_value_entry(table.vocabulary[answer]),
                negatives=[_value_entry(table.vocabulary[int(d)]) for d in distractors],
                evidence={
                    "field": self.field,
                    "level": self.level,
                    **({"depth": ctx.config.taxo_level} if self.level == "interm" else {}),
                    "next_item": str(ctx.matrix.item_ids[item]),
                    "next_event": [str(ctx.matrix.item_ids[int(j)]) for j in window.event],
                    "next_item_text": ctx.item_texts[item],
                    "position": window.position,
                    "view": view,
                },
            )
            if added is not None:
                record_window(maker, window)
        return maker.questions


def event_values(table: _ValueTable, event: np.ndarray) -> tuple[np.ndarray, set[int], list[str]]:
    """The label of one next event: values that may be the answer, values never wrong, their texts.

    Any eligible value of any item of the event may be the answer, and no
    value any of them has (anywhere in its field) is offered as wrong: the
    event is a set (:mod:`recworld.lrworld.ties`).
    """
    members = [int(j) for j in event]
    answers = np.unique(np.concatenate([table.answers[j] for j in members])).astype(np.int64)
    owned = set().union(*(table.owned[j] for j in members))
    texts = [text for j in members for text in table.owned_texts[j]]
    return answers, owned, texts


def _value_entry(value: str) -> Entry:
    return Entry(id=value, text=value)
