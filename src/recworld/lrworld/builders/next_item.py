"""Next-item measures (``text_logline``, ``mm_poster``, ``mm_image``, ``lastfm_next_artist``).

Ground truth (paper §3 i-j, leave-one-out with a sliding window): the user's
sequence is restricted to items that have the shown field (a logline, an
image description); at a position with at least ``min_history`` earlier such
items, the item there is the answer and the up to ``history_length`` items
before it are the history. History and options are shown by that field only
(no title), or by the default item text when ``view`` is None.

Positive set: the next event (every item the user has at the next timestamp,
:mod:`recworld.lrworld.ties`); the option shown is one of them, drawn with the
seed (:func:`event_positive`). Negatives: items with the field, uniform or
popularity-weighted (``negatives``), excluding every item the user ever
interacted with (any of them could be a plausible "next" item) and any item
whose shown text or title reads like another option (:mod:`recworld.lrworld.options`).
Windows with an event item already in the shown history (or a variant of a
shown item) are skipped; the history ends before the event and starts at a
time boundary.

Sequences imported from LLaRA (:mod:`recworld.data.llara`) are asked at their
last position only, and when the file gives a sequence's candidates those are
the options (LLaRA draws 19 negatives per sequence; the paper reuses its set).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recworld.lrworld.builders.base import (
    QuestionMaker,
    draw_distinct,
    matched_weights,
    negative_weights,
    record_window,
    sliding_windows,
)
from recworld.lrworld.context import BuildContext
from recworld.lrworld.measure import Measure
from recworld.lrworld.options import OptionGuard
from recworld.lrworld.schema import Entry, Question, Target


@dataclass(frozen=True)
class NextItemBuilder:
    view: str | None = None  # item field shown instead of the default text

    def _texts(self, ctx: BuildContext) -> list[str | None]:
        if self.view is None:
            return list(ctx.item_texts)
        return [None if v is None or str(v) == "" else str(v) for v in ctx.field_values(self.view)]

    def unavailable(self, ctx: BuildContext) -> str | None:
        have = sum(t is not None for t in self._texts(ctx))
        if have < 10:
            return f"only {have} items have {self.view or 'a text'}, need 10"
        return None

    def build(self, ctx: BuildContext, measure: Measure, rng: np.random.Generator) -> list[Question]:
        texts = self._texts(ctx)
        has = np.array([t is not None for t in texts], dtype=bool)
        pool = np.flatnonzero(has).astype(np.int64)
        weights = negative_weights(ctx, "item", pool)
        seq = ctx.sequences.restricted(has) if self.view is not None else ctx.sequences
        windows = ctx.windows(seq, has, measure.id)
        n_negatives = measure.format.n_options - 1
        fixed = ctx.given_candidates()

        def entry(j: int) -> Entry:
            return Entry(id=str(ctx.matrix.item_ids[j]), text=str(texts[j]))

        maker = QuestionMaker(ctx, measure)
        for window in sliding_windows(ctx, seq, windows, rng, maker):
            user, shown = window.user, window.shown
            item = event_positive(window.event, rng)
            if user in fixed:
                answer_id = str(ctx.matrix.item_ids[item])
                negatives = [ctx.catalogue_entry(c) for c in fixed[user] if c != answer_id]
            else:
                identities = ctx.item_identities
                members = [int(j) for j in window.event]
                guard = OptionGuard(
                    lambda j: str(texts[j]),
                    [str(texts[j]) for j in members],
                    identity_of=identities.__getitem__,
                    taken_identities=[identities[j] for j in members],
                )
                exclude = {*members, *ctx.observed("user", user).tolist()}
                drawn_weights = matched_weights(ctx, "item", pool, weights, item)
                drawn = draw_distinct(rng, pool, n_negatives, exclude, drawn_weights, guard)
                negatives = [] if drawn is None else [entry(int(j)) for j in drawn]
            if len(negatives) != n_negatives:
                maker.drop("too_few_negatives")
                continue
            user_id = str(ctx.matrix.user_ids[user])
            added = maker.add(
                rng,
                target=Target(kind="user", id=user_id, text=f"user {user_id}"),
                history=[entry(int(j)) for j in shown],
                positive=entry(item),
                negatives=negatives,
                evidence={
                    "view": self.view or "text",
                    "next_item_text": ctx.item_texts[item],
                    "next_event": [str(ctx.matrix.item_ids[int(j)]) for j in window.event],
                    "position": window.position,
                },
            )
            if added is not None:
                record_window(maker, window)
        return maker.questions


def event_positive(event: np.ndarray, rng: np.random.Generator) -> int:
    """The option that shows a next event: one of its items, drawn with the seed (never by id order).

    Every item of the event is right: the others are the user's too, so never negatives.
    """
    if len(event) == 1:
        return int(event[0])
    return int(event[rng.integers(len(event))])
