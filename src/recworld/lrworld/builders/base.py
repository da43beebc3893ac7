"""The protocol every builder meets, and the helpers they share: drawing negatives, placing the positive.

A catalogue entry names its builder family (:data:`~recworld.lrworld.measure.BuilderSpec`);
:func:`recworld.lrworld.builders.builder_for` turns that name into a :class:`MeasureBuilder`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from recworld.lrworld.context import BuildContext, EntityKind, Sequences
from recworld.lrworld.measure import Measure
from recworld.lrworld.options import OptionGuard, distinct_texts
from recworld.lrworld.schema import Entry, Question, Target


class MeasureBuilder(Protocol):
    """Builds one measure's questions; the measure's catalogue entry names which one."""

    def unavailable(self, ctx: BuildContext) -> str | None:
        """Why this dataset cannot give this measure (beyond missing fields), or None."""
        ...

    def build(self, ctx: BuildContext, measure: Measure, rng: np.random.Generator) -> list[Question]:
        """Up to ``ctx.config.per_measure`` questions, drawing only from ``rng``."""
        ...


# Rejection rounds before falling back to an explicit complement (only hit when few values remain).
_MAX_ROUNDS = 8


def draw_distinct(
    rng: np.random.Generator,
    pool: np.ndarray,
    k: int,
    exclude: Collection[int],
    weights: np.ndarray | None = None,
    guard: OptionGuard | None = None,
) -> np.ndarray | None:
    """``k`` distinct values of ``pool`` outside ``exclude``, uniform or weighted; None if too few exist.

    With a ``guard``, a value whose text reads like an option already in the
    question (:mod:`recworld.lrworld.options`) is skipped as well. Rejection
    sampling keeps the cost O(k) on large pools; the complement is only
    materialised when rejection keeps failing (tiny or nearly excluded pools).
    """
    if k == 0:
        return np.empty(0, dtype=np.int64)
    probs = None if weights is None else weights / weights.sum()
    chosen: list[int] = []
    seen = set(int(x) for x in exclude)
    for _ in range(_MAX_ROUNDS):
        picks = rng.choice(len(pool), size=2 * k + 4, p=probs)
        for pick in picks:
            value = int(pool[pick])
            if value in seen:
                continue
            seen.add(value)
            if guard is None or guard.admit(value):
                chosen.append(value)
                if len(chosen) == k:
                    return np.asarray(chosen, dtype=np.int64)
    return _draw_from_rest(rng, pool, k - len(chosen), seen, weights, guard, chosen)


def _draw_from_rest(
    rng: np.random.Generator,
    pool: np.ndarray,
    need: int,
    seen: set[int],
    weights: np.ndarray | None,
    guard: OptionGuard | None,
    chosen: list[int],
) -> np.ndarray | None:
    """The explicit-complement fallback of :func:`draw_distinct`."""
    # Vectorised: a neural target may exclude ~100k seen keys from a pool of similar size.
    keep = ~np.isin(pool, np.fromiter(seen, dtype=np.int64, count=len(seen)))
    if weights is not None:
        keep &= weights > 0
    rest = pool[keep]
    if len(rest) < need:
        return None
    rest_probs = None if weights is None else weights[keep] / weights[keep].sum()
    if guard is None:
        extra = rng.choice(rest, size=need, replace=False, p=rest_probs)
        return np.asarray([*chosen, *(int(x) for x in extra)], dtype=np.int64)
    # A seeded (weighted) order over the whole rest, admitting values that read differently.
    for value in rng.choice(rest, size=len(rest), replace=False, p=rest_probs).tolist():
        if guard.admit(int(value)):
            chosen.append(int(value))
            need -= 1
            if need == 0:
                return np.asarray(chosen, dtype=np.int64)
    return None


def negative_weights(ctx: BuildContext, kind: EntityKind, pool: np.ndarray) -> np.ndarray | None:
    """Weights for :func:`draw_distinct` over ``pool`` (items or users) under ``config.negatives``.

    ``uniform`` (the paper) gives None. ``popularity`` weighs each candidate by
    its interaction count (items: users who met it; users: items they met), so
    negatives are drawn, without replacement among the eligible non-positives,
    in proportion to popularity: positives of rule and similarity measures are
    mostly popular, and uniform negatives let "pick the most popular option"
    find them without any reasoning.
    """
    if ctx.config.negatives == "uniform":
        return None
    counts = ctx.item_degree if kind == "item" else ctx.user_degree
    return np.asarray(counts[pool], dtype=np.float64)


class QuestionMaker:
    """Numbers one measure's questions and places each positive at a seeded position.

    It is also the last line of the rule that no two options read the same
    (:mod:`recworld.lrworld.options`): builders draw negatives through an
    :class:`OptionGuard`, and a question that still shows two options reading
    alike (a builder that drew without one) is dropped here, never written.
    """

    def __init__(self, ctx: BuildContext, measure: Measure) -> None:
        self.ctx = ctx
        self.measure = measure
        self.questions: list[Question] = []
        self.dropped = 0  # questions whose options read alike (see the class docstring)

    @property
    def full(self) -> bool:
        return len(self.questions) >= self.ctx.config.per_measure

    def add(
        self,
        rng: np.random.Generator,
        *,
        target: Target,
        positive: Entry,
        negatives: list[Entry],
        history: list[Entry] | None = None,
        evidence: dict[str, Any] | None = None,
    ) -> Question | None:
        n = self.measure.format.n_options
        if len(negatives) != n - 1:
            raise ValueError(f"{self.measure.id}: need {n - 1} negatives, got {len(negatives)}")
        if not distinct_texts([positive.text, *(e.text for e in negatives)]):
            self.dropped += 1
            return None
        position = int(rng.integers(n))
        candidates = [*negatives[:position], positive, *negatives[position:]]
        dataset = self.ctx.dataset
        question = Question(
            id=f"{dataset.name}/{self.measure.id}/{len(self.questions):05d}",
            dataset=dataset.name,
            domain=dataset.domain.value,
            measure=self.measure.id,
            scale=self.measure.scale.value,
            format=self.measure.format,
            target=target,
            history=history or [],
            candidates=candidates,
            answer_index=position,
            evidence=evidence or {},
            seed=self.ctx.config.seed,
        )
        self.questions.append(question)
        return question


def pick_order(rng: np.random.Generator, n: int, want: int) -> np.ndarray:
    """A seeded visiting order over ``n`` targets, long enough to find ``want`` usable ones.

    Builders skip unusable targets and stop at ``want`` questions; on huge pools
    (every sliding window of ML-25M) a without-replacement sample with headroom
    avoids permuting tens of millions of positions.
    """
    budget = 3 * want + 100
    if n <= 4 * budget:
        return rng.permutation(n).astype(np.int64)
    return rng.choice(n, size=budget, replace=False).astype(np.int64)


@dataclass(frozen=True)
class Window:
    """One leave-one-out window: a user's shown history and the item that came next."""

    user: int  # matrix row of the user
    item: int  # matrix column of the held-out next item
    shown: np.ndarray  # up to ``history_length`` items before it, oldest first
    position: int  # index of the next item in the user's time-ordered history


def sliding_windows(
    ctx: BuildContext,
    seq: Sequences,
    windows: np.ndarray,
    rng: np.random.Generator,
    maker: QuestionMaker,
) -> Iterator[Window]:
    """A seeded sample of ``windows`` (positions in ``seq``), until ``maker`` is full.

    Each shows up to :attr:`BuildContext.history_length` items (10 on LastFM, as LLaRA).

    A window whose next item is already in the shown history is skipped: the
    answer would be on screen.
    """
    for pick in pick_order(rng, len(windows), ctx.config.per_measure):
        if maker.full:
            return
        p = int(windows[pick])
        user = int(seq.user_of(np.array([p]))[0])
        item = int(seq.items[p])
        start = max(int(seq.ptr[user]), p - ctx.history_length)
        shown = seq.items[start:p]
        if item in shown:
            continue
        yield Window(user, item, shown, p - int(seq.ptr[user]))
