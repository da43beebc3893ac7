"""``mem_item_item`` / ``mem_user_user``: pick the nearest neighbour by cosine over binary vectors.

Ground truth: items are vectors over users (1 where the user interacted),
users are vectors over items; the answer is the entity with the highest cosine
to the target (self excluded). Positive set: every entity tied with that top
score (within :data:`~recworld.lrworld.context.TIE_TOLERANCE`, :func:`top_set`);
one of them is shown, drawn with the seed (never the lowest id), the others
never appear as negatives. A target is skipped (and counted) when its top
cosine is below ``min_similarity`` (the paper's 0.01 threshold), when its ties
run past the neighbours the miner returned, when the top beats the runner-up
(the best cosine below the tie) by less than ``memory_margin``, or when no
tied positive shares at least ``memory_min_support`` users (items) with the
target (:func:`shared_count`): two items met by one same user have cosine 1.0
and say nothing of co-watching. The paper states no margin or support; these
two are ours (docs/lrworld.md). Users need ``min_history``
interactions to be targets. Negatives: the other entities, uniform or
popularity-weighted (``negatives``), never reading like the target or a tied
positive (:mod:`recworld.lrworld.options`): a same-title variant of the
target item is not a negative, and when the best neighbour *is* such a variant
the question shows another tied positive or is not asked (counted in the
manifest's ``filters``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recworld.lrworld.builders.base import (
    QuestionMaker,
    draw_distinct,
    matched_weights,
    negative_weights,
    pick_order,
)
from recworld.lrworld.context import TIE_TOLERANCE, BuildContext, EntityKind
from recworld.lrworld.measure import Measure
from recworld.lrworld.schema import Question, Target


@dataclass(frozen=True)
class MemoryBuilder:
    kind: EntityKind

    def unavailable(self, ctx: BuildContext) -> str | None:
        n = ctx.n_items if self.kind == "item" else ctx.n_users
        if n < 10:
            return f"needs at least 10 {self.kind}s, the dataset has {n}"
        return None

    def build(self, ctx: BuildContext, measure: Measure, rng: np.random.Generator) -> list[Question]:
        vectors = ctx.item_users if self.kind == "item" else ctx.user_items
        n_entities = vectors.shape[0]
        usable = np.diff(vectors.indptr) > 0
        if self.kind == "user":
            usable &= ctx.sequences.lengths >= ctx.config.min_history
        candidates = np.flatnonzero(usable)
        # Neighbours are computed for a seeded sample of targets only (with headroom for skips),
        # in chunks, stopping once the measure is full: on ML-25M one user-user row costs ~40 ms,
        # and most targets qualify, so the headroom is rarely computed. Rows do not depend on
        # the chunk they are computed in, so the questions are those of one big call.
        targets = candidates[pick_order(rng, len(candidates), ctx.config.per_measure)]
        pool = np.arange(n_entities, dtype=np.int64)
        weights = negative_weights(ctx, self.kind, pool)
        maker = QuestionMaker(ctx, measure)
        chunk = max(64, ctx.config.per_measure + ctx.config.per_measure // 10)
        for start in range(0, len(targets), chunk):
            if maker.full:
                break
            self._add_chunk(ctx, measure, rng, maker, pool, weights, targets[start : start + chunk])
        return maker.questions

    def _add_chunk(
        self,
        ctx: BuildContext,
        measure: Measure,
        rng: np.random.Generator,
        maker: QuestionMaker,
        pool: np.ndarray,
        weights: np.ndarray | None,
        targets: np.ndarray,
    ) -> None:
        n_entities = len(pool)
        nb = ctx.neighbours(self.kind, targets)
        top = np.where(nb.index[:, 0] >= 0, nb.score[:, 0], -np.inf)
        reaches = top >= max(ctx.config.min_similarity, np.finfo(np.float32).tiny)
        eligible = reaches.copy()
        # Ties that fill every returned slot may continue beyond it: the positive set is unknown.
        if nb.index.shape[1] < n_entities - 1:
            last = nb.score[:, -1]
            eligible &= ~((nb.index[:, -1] >= 0) & (last >= top - TIE_TOLERANCE))
        for row, t in enumerate(targets.tolist()):
            if maker.full:
                break
            if not eligible[row]:
                maker.drop("below_min_similarity" if not reaches[row] else "ties_past_returned_neighbours")
                continue
            tied, runner_up = top_set(nb.index[row], nb.score[row], float(top[row]))
            label = memory_label(ctx, self.kind, t, tied, float(top[row]), runner_up)
            shown = None if isinstance(label, str) else choose_positive(ctx, self.kind, t, label, rng)
            if shown is None:
                maker.drop(label if isinstance(label, str) else "positive_reads_like_target")
                continue
            entry = ctx.entity_entry(self.kind, t)
            guard = ctx.option_guard(self.kind, [t, *tied.tolist()])
            negatives = draw_distinct(
                rng,
                pool,
                measure.format.n_options - 1,
                {t, *tied.tolist()},
                matched_weights(ctx, self.kind, pool, weights, shown),
                guard,
            )
            if negatives is None:
                maker.drop("too_few_negatives")
                continue
            maker.add(
                rng,
                target=Target(kind=self.kind, id=entry.id, text=entry.text),
                positive=ctx.entity_entry(self.kind, shown),
                negatives=[ctx.entity_entry(self.kind, int(j)) for j in negatives],
                evidence={
                    "cosine": round(float(top[row]), 6),
                    "runner_up": round(runner_up, 6),
                    "tied_positives": len(tied),
                    **target_view(ctx, self.kind, t),
                },
            )


def top_set(index: np.ndarray, score: np.ndarray, top: float) -> tuple[np.ndarray, float]:
    """The label of one target: every neighbour tied with the top cosine, and the best score below it.

    The runner-up is 0 when no other neighbour came back (binary cosines are never negative).
    """
    valid = index >= 0
    tied_mask = valid & (score >= top - TIE_TOLERANCE)
    below = score[valid & ~tied_mask]
    return index[tied_mask], float(below.max()) if len(below) else 0.0


def memory_label(
    ctx: BuildContext, kind: EntityKind, target: int, tied: np.ndarray, top: float, runner_up: float
) -> np.ndarray | str:
    """The tied positives a question may show, or why the target is not asked (a drop reason).

    Not asked when the top beats the runner-up by less than ``memory_margin``,
    or when no tied positive shares ``memory_min_support`` users (items) with the target.
    """
    if top - runner_up < ctx.config.memory_margin:
        return "below_margin"
    supported = tied[shared_count(ctx, kind, target, tied, top) >= ctx.config.memory_min_support]
    return supported if len(supported) else "below_min_support"


def shared_count(
    ctx: BuildContext, kind: EntityKind, target: int, others: np.ndarray, cosine: float
) -> np.ndarray:
    """Co-users (items) or co-items (users) of ``target`` with each of ``others`` at binary ``cosine``.

    For binary vectors cosine = shared / sqrt(|a| |b|), so shared = cosine * sqrt(|a| |b|).
    """
    degree = ctx.item_degree if kind == "item" else ctx.user_degree
    sizes = degree[target] * degree[others].astype(np.float64)
    return np.asarray(np.rint(cosine * np.sqrt(sizes)), dtype=np.int64)


def choose_positive(
    ctx: BuildContext, kind: EntityKind, target: int, tied: np.ndarray, rng: np.random.Generator
) -> int | None:
    """A tied positive not reading like the target (a variant of it), drawn with the seed; None if all do.

    Drawn, not the first by index: which of several equally right entities is
    shown is never decided by id order. A single candidate draws nothing.
    """
    identity = ctx.entity_identity(kind, target)
    usable = [int(j) for j in tied.tolist() if ctx.entity_identity(kind, int(j)) != identity]
    if len(usable) <= 1:
        return usable[0] if usable else None
    return usable[int(rng.integers(len(usable)))]


def target_view(ctx: BuildContext, kind: EntityKind, target: int) -> dict[str, object]:
    """Evidence of how a user target is shown: the ids of its items (the noisy variant swaps one)."""
    if kind != "user":
        return {}
    return {"view": "text", "shown_items": ctx.user_shown_items(target)}
