"""The oracle's ground truth of next-item questions, from the dataset and the build config alone.

Invariant: the answer of a window question (attributes, taxonomy, text,
images, next artist) is recomputed from the suite's dataset and manifest and
the question's public view, never from its evidence: the shown history is
looked up in the user's time-ordered sequence (the builder's own
:class:`~recworld.lrworld.context.BuildContext`, restricted to items with the
shown field as the builder restricts it), the position right after it must be
a window the builder asks (``BuildContext.windows``: the history rule and the
tie rule, so a change to either reaches the oracle unchanged), and the
item there is the next item. Which tie rule the suite was built under is the
manifest's to say: up to ``recworld.manifest/3`` the next item alone is the
answer and the history is the ``history_length`` items before it; later
manifests ask a next *event*, every item the user has at that timestamp (any
of its values is right, ranked below the next item's own), with the history
cut at a time boundary (issue 24.3). ``tests/evaluation/test_oracle_planted.py``
checks it on suites with the evidence stripped and labels moved.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recworld.baselines.training import as_values
from recworld.data.dataset import Dataset
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.context import BuildContext, Sequences
from recworld.lrworld.options import fold
from recworld.lrworld.schema import PublicQuestion
from recworld.lrworld.ties import history_start

__all__ = ["NextEvents"]

# The score of an option that is the next item's own value, and of one held by a same-time co-next item.
OWN, CO_NEXT, NONE = 2.0, 1.0, 0.0


@dataclass(frozen=True)
class _View:
    """The sequences a measure walks (all items, or those with its shown field) and the windows it asks."""

    seq: Sequences
    asked: np.ndarray  # bool per flat position: a window the builder may ask about


class NextEvents:
    """Locates a question's window in its user's sequence and scores its options by the next event."""

    def __init__(self, dataset: Dataset, config: BuildConfig, *, events_are_sets: bool) -> None:
        self._dataset = dataset
        self._config = config
        self._sets = events_are_sets
        self._ctx: BuildContext | None = None
        self._users: dict[str, int] = {}
        self._items: dict[str, int] = {}
        self._views: dict[str | None, _View] = {}
        self._values: dict[str, list[frozenset[str]]] = {}
        self._lock = threading.Lock()

    def _context(self) -> BuildContext:
        if self._ctx is None:
            self._ctx = BuildContext(self._dataset, self._config)
            self._users = self._ctx.matrix.user_index()
            self._items = self._ctx.matrix.item_index()
        return self._ctx

    def _view(self, view: str | None) -> _View:
        if view not in self._views:
            ctx = self._context()
            seq = ctx.sequences
            if view is not None:
                has = np.array([v is not None and str(v) != "" for v in ctx.field_values(view)], dtype=bool)
                seq = seq.restricted(has)
            positions = ctx.windows(seq, np.ones(ctx.n_items, dtype=bool), f"oracle:{view}")
            asked = np.zeros(len(seq.items), dtype=bool)
            asked[positions] = True
            self._views[view] = _View(seq, asked)
        return self._views[view]

    def _field(self, name: str) -> list[frozenset[str]]:
        if name not in self._values:
            raw = self._context().field_values(name)
            self._values[name] = [frozenset(fold(v) for v in as_values(value)) for value in raw]
        return self._values[name]

    def scores(self, question: PublicQuestion, *, view: str | None, field: str | None) -> list[float]:
        """Per option: :data:`OWN` for the next item (or one of its ``field`` values), :data:`CO_NEXT`
        for a same-time co-next item's, :data:`NONE` otherwise; all NONE when no asked window matches.
        """
        with self._lock:
            ctx = self._context()
            data = self._view(view)
            values = None if field is None else self._field(field)
        events = self._next_events(ctx, data, question)
        best = [NONE] * len(question.candidates)
        for own, co_next in events:
            for i, option in enumerate(question.candidates):
                for score, col in ((OWN, own), *((CO_NEXT, c) for c in co_next)):
                    if _matches(ctx, values, col, option.id, option.text):
                        best[i] = max(best[i], score)
        return best

    def _next_events(
        self, ctx: BuildContext, data: _View, question: PublicQuestion
    ) -> list[tuple[int, list[int]]]:
        """(next item, its same-time successors) at every asked window right after the shown history."""
        if question.target.kind != "user":
            return []
        row = self._users.get(question.target.id)
        shown = [self._items.get(e.id) for e in question.history]
        if row is None or any(c is None for c in shown):
            return []
        seq, start = data.seq, int(data.seq.ptr[row])
        user_items = seq.of(row).tolist()
        user_times = seq.times[start : int(seq.ptr[row + 1])].tolist()
        n, length = len(user_items), ctx.history_length
        found: list[tuple[int, list[int]]] = []
        for offset in _offsets_after(user_items, [int(c) for c in shown if c is not None]):
            if offset >= n or not data.asked[start + offset]:
                continue
            if not self._history_fits(user_times, offset, len(shown), length):
                continue
            same = [user_items[j] for j in range(offset + 1, n) if user_times[j] == user_times[offset]]
            found.append((user_items[offset], same if self._sets else []))
        return found

    def _history_fits(self, times: Sequence[int], offset: int, shown: int, length: int) -> bool:
        """The shown history is what the builder shows before ``offset``: all of it, up to ``length``."""
        if shown == min(offset, length):
            return True
        return self._sets and shown == offset - history_start(0, np.asarray(times), offset, length)


def _offsets_after(sequence: Sequence[int], shown: Sequence[int]) -> list[int]:
    """Every offset ``o`` with ``sequence[o - len(shown):o] == shown`` (the item right after the history)."""
    k = len(shown)
    if k == 0:
        return [0]
    first = shown[0]
    return [
        start + k
        for start in range(len(sequence) - k + 1)
        if sequence[start] == first and list(sequence[start : start + k]) == list(shown)
    ]


def _matches(
    ctx: BuildContext, values: list[frozenset[str]] | None, col: int, option_id: str, text: str
) -> bool:
    if values is None:
        return str(ctx.matrix.item_ids[col]) == option_id
    return fold(text) in values[col]
