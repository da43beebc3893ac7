"""The protocol every builder meets, and the helpers they share: drawing negatives, placing the positive.

A catalogue entry names its builder family (:data:`~recworld.lrworld.measure.BuilderSpec`);
:func:`recworld.lrworld.builders.builder_for` turns that name into a :class:`MeasureBuilder`.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from recworld.lrworld.context import BuildContext, EntityKind, Sequences
from recworld.lrworld.measure import Measure, OptionKind
from recworld.lrworld.options import OptionGuard, distinct_keys, distinct_texts, fold
from recworld.lrworld.schema import Entry, Question, Target
from recworld.lrworld.ties import event_end, history_start


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
    if ctx.config.negatives != "popularity":  # uniform, or matched (per question: matched_weights)
        return None
    counts = ctx.item_degree if kind == "item" else ctx.user_degree
    return np.asarray(counts[pool], dtype=np.float64)


def draw_one(tied: np.ndarray, rng: np.random.Generator) -> int:
    """One of several equally right entities, drawn with the seed (a single one draws nothing)."""
    return int(tied[0]) if len(tied) == 1 else int(tied[rng.integers(len(tied))])


POPULARITY_BINS = 30  # ML-100K neu_user2items popularity: 10 bins leave 0.449, 30 leave 0.309
BIN_MIN_SIZE = 40  # entities per bin at least (4x a hit@1 question's options): fewer bins on small data
_BINS: weakref.WeakKeyDictionary[BuildContext, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()


def popularity_bins(ctx: BuildContext, kind: EntityKind) -> np.ndarray:
    """Per entity of ``kind``: its popularity bin (0 = least popular).

    ``min(POPULARITY_BINS, n // BIN_MIN_SIZE)`` equal-count bins (at least one);
    equal counts are ordered by index, so each bin holds the same number of entities.
    """
    table = _BINS.setdefault(ctx, {})
    if kind not in table:
        counts = ctx.item_degree if kind == "item" else ctx.user_degree
        rank = np.empty(len(counts), dtype=np.int64)
        rank[np.argsort(counts, kind="stable")] = np.arange(len(counts))
        n_bins = max(1, min(POPULARITY_BINS, len(counts) // BIN_MIN_SIZE))
        table[kind] = rank * n_bins // max(len(counts), 1)
    return table[kind]


def matched_weights(
    ctx: BuildContext, kind: EntityKind, pool: np.ndarray, weights: np.ndarray | None, positive: int
) -> np.ndarray | None:
    """``weights``, except under ``negatives="matched"``: only the positive's popularity bin.

    Popularity-matched negatives (a standard control): every negative is as
    popular as the positive to within 1/30 of the catalogue by rank, so neither
    "pick the most popular" nor "pick the least popular" points at the answer.
    Too few eligible entities in the bin drops the question (``too_few_negatives``).
    """
    if ctx.config.negatives != "matched":
        return weights
    bins = popularity_bins(ctx, kind)
    return np.asarray(bins[pool] == bins[positive], dtype=np.float64)


class QuestionMaker:
    """Numbers one measure's questions, places each positive at a seeded position, counts what it drops.

    It is also the last line of the rule that no option gives itself away
    (:mod:`recworld.lrworld.options`): builders draw negatives through an
    :class:`OptionGuard`, and a question is dropped here, never written, when
    two options read alike (same folded text, or for items the same folded
    title), when the positive reads like the target (an item-item or user-user
    question answered by the target's own variant), or when an item positive
    reads like an item the question shows for its user (history, or the items
    a user target is shown by). Every drop is counted per reason in
    :attr:`filter` (the manifest's ``filters``).
    """

    def __init__(self, ctx: BuildContext, measure: Measure) -> None:
        self.ctx = ctx
        self.measure = measure
        self.questions: list[Question] = []
        self.filter = ctx.filter_for(measure.id)

    @property
    def full(self) -> bool:
        return len(self.questions) >= self.ctx.config.per_measure

    def drop(self, reason: str) -> None:
        """Count one visited target or window that gives no question, and why."""
        self.filter.drop(reason)

    def merge(self, rule: str) -> None:
        """Count one asked question that a tie rule reshaped (a set positive, a shorter history)."""
        self.filter.merge(rule)

    def _identity(self, kind: OptionKind | str, entry: Entry) -> str:
        if kind in (OptionKind.ITEM, "item"):
            return self.ctx.identity_of_item_id(entry.id, entry.text)
        return fold(entry.text)

    def _giveaway(
        self, target: Target, positive: Entry, negatives: list[Entry], shown: list[Entry]
    ) -> str | None:
        """Why the options would give the answer away (a drop reason), or None."""
        options = [positive, *negatives]
        kind = self.measure.options
        if not distinct_texts(e.text for e in options):
            return "options_read_alike"
        if kind is not OptionKind.ATTRIBUTE and not distinct_keys(self._identity(kind, e) for e in options):
            return "options_read_alike"
        if target.kind == kind.value:
            target_entry = Entry(id=target.id, text=target.text)
            identity = self._identity(kind, target_entry)
            if fold(positive.text) == fold(target.text) or self._identity(kind, positive) == identity:
                return "positive_reads_like_target"
            if any(self._identity(kind, e) == identity for e in negatives):
                return "negative_reads_like_target"
        if kind is OptionKind.ITEM and shown:
            seen = {self._identity("item", e) for e in shown} | {fold(e.text) for e in shown}
            if self._identity(kind, positive) in seen or fold(positive.text) in seen:
                return "positive_reads_like_history"
        return None

    def add(
        self,
        rng: np.random.Generator,
        *,
        target: Target,
        positive: Entry,
        negatives: list[Entry],
        history: list[Entry] | None = None,
        evidence: dict[str, Any] | None = None,
        target_items: list[Entry] | None = None,
    ) -> Question | None:
        """Place and number one question, or drop it (counted) when its options give it away.

        ``target_items`` are the items a user target is shown by (its text lists them).
        """
        n = self.measure.format.n_options
        if len(negatives) != n - 1:
            raise ValueError(f"{self.measure.id}: need {n - 1} negatives, got {len(negatives)}")
        reason = self._giveaway(target, positive, negatives, [*(history or []), *(target_items or [])])
        if reason is not None:
            self.drop(reason)
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
    """One leave-one-out window: a user's shown history and the next event (every item at the next time)."""

    user: int  # matrix row of the user
    event: np.ndarray  # matrix columns of the next event's items (one unless tied in time), id order
    shown: np.ndarray  # the history: up to ``history_length`` items before it, oldest first
    position: int  # index of the event's first item in the user's time-ordered history
    cut_at_tie: bool  # the history's start moved to a time boundary (it is shorter)


def sliding_windows(
    ctx: BuildContext,
    seq: Sequences,
    windows: np.ndarray,
    rng: np.random.Generator,
    maker: QuestionMaker,
) -> Iterator[Window]:
    """A seeded sample of ``windows`` (event starts in ``seq``), until ``maker`` is full.

    Each shows up to :attr:`BuildContext.history_length` items (10 on LastFM,
    as LLaRA), cut at a time boundary (:func:`recworld.lrworld.ties.history_start`).

    A window with an item of its next event already in the shown history, or
    reading like a shown item (a variant of one product: same folded title),
    is skipped and counted: the answer would be on screen. So is one whose
    whole history is a tie cut away. ``windows`` come from
    :meth:`BuildContext.windows`, which keeps only the starts of next events.
    """
    identities = ctx.item_identities
    for pick in pick_order(rng, len(windows), ctx.config.per_measure):
        if maker.full:
            return
        p = int(windows[pick])
        user = int(seq.user_of(np.array([p]))[0])
        user_start, user_end = int(seq.ptr[user]), int(seq.ptr[user + 1])
        event = seq.items[p : event_end(user_end, seq.times, p)]
        plain = max(user_start, p - ctx.history_length)
        start = history_start(user_start, seq.times, p, ctx.history_length)
        shown = seq.items[start:p]
        if len(shown) == 0:
            maker.drop("history_all_tied")
            continue
        if np.isin(event, shown).any():
            maker.drop("next_item_in_history")
            continue
        shown_identities = {identities[int(j)] for j in shown}
        if any(identities[int(j)] in shown_identities for j in event):
            maker.drop("next_item_twin_in_history")
            continue
        yield Window(user, event, shown, p - user_start, start != plain)


def record_window(maker: QuestionMaker, window: Window) -> None:
    """Count what the tie rules reshaped in a window that became a question."""
    if len(window.event) > 1:
        maker.merge("next_event_set")
    if window.cut_at_tie:
        maker.merge("history_cut_at_tie")
