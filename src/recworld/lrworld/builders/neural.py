"""``neu_item2users`` / ``neu_user2items``: pick the closest entity in NeuMF embedding space.

Ground truth: NeuMF (the miner's ``train_neumf``) gives user and item
embeddings; the answer is the key with the highest cosine to the target's
embedding. Targets are spread over k-means clusters of the target side's
embeddings (``kmeans_clusters``, paper: 10) with the miner's ``kmeans_pick``.
Only pairs not seen in training are ranked, as a recommender would rank them:
the users who already interacted with a target item (or the items a target
user already has) are neither the answer nor negatives. Positive set: the
unseen keys tied with the top cosine. Negatives: the remaining unseen keys,
uniform or popularity-weighted (``negatives``). Users need ``min_history``
interactions to be targets.

The ground truth is only as good as the NeuMF behind it, so before any
question is made its held-out check must beat popularity (``check_neumf``):
otherwise the build stops with :class:`WeakNeuMFError` (exit 3) unless
``allow_weak_neumf``. ``neumf_record`` puts the check and the training curve
into the manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from recworld import mining
from recworld.errors import RunError
from recworld.lrworld.builders.base import QuestionMaker, draw_distinct, negative_weights
from recworld.lrworld.context import NEIGHBOUR_K, TIE_TOLERANCE, BuildContext, EntityKind
from recworld.lrworld.manifest import NeuMFCheck, NeuMFEpoch
from recworld.lrworld.measure import Measure
from recworld.lrworld.schema import Question, Target
from recworld.seeding import child_seed

# Targets retrieved per dense_cosine_topk call: bounds the (targets x keys) score block.
_CHUNK = 128
# NeuMF "beats popularity" when its held-out HR@10 exceeds popularity's by more than this many
# standard errors of the paired per-user gap (about 2.3 % one-sided false-pass rate on noise).
WEAK_NEUMF_Z = 2.0


class WeakNeuMFError(RunError):
    """NeuMF trained but does not beat popularity on held-out items: its neighbours would be noise."""


def check_neumf(info: dict[str, Any], allow_weak: bool) -> NeuMFCheck:
    """The manifest record of a NeuMF run, with its verdict against popularity."""
    model, popularity, se = info.get("hr@10"), info.get("hr@10_popularity"), info.get("hr@10_gap_se")
    if model is None or popularity is None:
        verdict = "unchecked"
    elif model - popularity > WEAK_NEUMF_Z * (se if se is not None else 0.0):
        verdict = "beats_popularity"
    else:
        verdict = "weak"
    curve = [
        NeuMFEpoch(
            epoch=row["epoch"],
            loss=round(row["loss"], 6),
            positives=row["positives"],
            examples=row["examples"],
            hr_at_10=row["hr@10_valid"],
            hr_at_10_embedding=row["hr@10_valid_embedding"],
        )
        for row in info.get("curve", [])
    ]
    return NeuMFCheck(
        eval_users=info.get("eval_users", 0),
        eval_candidates=info.get("eval_candidates"),
        epochs_run=len(curve),
        best_epoch=info.get("best_epoch", len(curve)),
        stopped_early=bool(info.get("stopped_early", False)),
        curve=curve,
        hr_at_10=model,
        hr_at_10_popularity=popularity,
        hr_at_10_embedding=info.get("hr@10_embedding"),
        gap_se=se,
        verdict=verdict,
        allowed_weak=allow_weak and verdict == "weak",
    )


def require_useful_neumf(info: dict[str, Any], allow_weak: bool) -> NeuMFCheck:
    """The check, or :class:`WeakNeuMFError` when NeuMF is weak and weakness is not allowed."""
    check = check_neumf(info, allow_weak)
    if check.verdict == "weak" and not allow_weak:
        raise WeakNeuMFError(
            f"NeuMF does not beat popularity on held-out items: HR@10 {check.hr_at_10:.3f} against "
            f"{check.hr_at_10_popularity:.3f} over {check.eval_users} users (needs a gap above "
            f"{WEAK_NEUMF_Z:g} standard errors, {WEAK_NEUMF_Z * (check.gap_se or 0.0):.3f}), so the neu_* "
            "ground truth would be noise; train longer (BuildConfig.neumf) or pass --allow-weak-neumf"
        )
    return check


def neumf_record(ctx: BuildContext) -> NeuMFCheck | None:
    """The NeuMF check for the manifest, or None when this build never trained NeuMF."""
    if "neumf" not in vars(ctx):  # ``BuildContext.neumf`` is a cached_property: trained on first use
        return None
    return check_neumf(ctx.neumf.info, ctx.config.allow_weak_neumf)


@dataclass(frozen=True)
class NeuralBuilder:
    kind: EntityKind  # the target's kind; candidates are the other kind

    @property
    def key_kind(self) -> EntityKind:
        return "user" if self.kind == "item" else "item"

    def unavailable(self, ctx: BuildContext) -> str | None:
        if min(ctx.n_items, ctx.n_users) < 10:
            return "needs at least 10 users and 10 items"
        return None

    def build(self, ctx: BuildContext, measure: Measure, rng: np.random.Generator) -> list[Question]:
        emb = ctx.neumf
        require_useful_neumf(emb.info, ctx.config.allow_weak_neumf)
        queries, keys = (emb.item, emb.user) if self.kind == "item" else (emb.user, emb.item)
        eligible = np.arange(len(queries), dtype=np.int64)
        if self.kind == "user":
            eligible = eligible[ctx.sequences.lengths >= ctx.config.min_history]
        if len(eligible) == 0:
            return []
        with ctx.stage(f"kmeans:{measure.id}"):
            picked = mining.kmeans_pick(
                queries[eligible],
                min(ctx.config.kmeans_clusters, len(eligible)),
                # A little headroom so targets skipped for ties do not leave the measure short.
                min(ctx.config.per_measure + ctx.config.per_measure // 10 + 10, len(eligible)),
                child_seed(ctx.config.seed, "build", measure.id, "kmeans"),
            )
        targets = eligible[np.asarray(picked, dtype=np.int64)]
        pool = np.arange(len(keys), dtype=np.int64)
        weights = negative_weights(ctx, self.key_kind, pool)
        maker = QuestionMaker(ctx, measure)
        # Each target's own keys are excluded inside the retrieval, so k unseen neighbours
        # suffice whatever the target's degree (a popular item seen by most users included).
        seen_table = ctx.user_items if self.kind == "user" else ctx.item_users
        k = min(len(keys), NEIGHBOUR_K)
        for start in range(0, len(targets), _CHUNK):
            if maker.full:
                break
            chunk = targets[start : start + _CHUNK]
            with ctx.stage(f"retrieve:{measure.id}"):
                nb = mining.dense_cosine_topk(queries[chunk], keys, k, exclude=seen_table[chunk])
            for row, t in enumerate(chunk.tolist()):
                if maker.full:
                    break
                seen = ctx.observed(self.kind, t)
                self._add(ctx, maker, rng, pool, weights, t, seen, nb.index[row], nb.score[row], k)
        return maker.questions

    def _add(
        self,
        ctx: BuildContext,
        maker: QuestionMaker,
        rng: np.random.Generator,
        pool: np.ndarray,
        weights: np.ndarray | None,
        t: int,
        seen: np.ndarray,
        index: np.ndarray,
        score: np.ndarray,
        k: int,
    ) -> None:
        # ``index`` holds unseen keys only (the retrieval excluded ``seen``); -1 pads.
        unseen = index >= 0
        if not unseen.any():
            return
        top = float(score[unseen][0])
        tied_mask = unseen & (score >= top - TIE_TOLERANCE)
        # Ties reaching the last returned slot may continue past it: skip, do not guess.
        if k < len(pool) - len(seen) and tied_mask[-1]:
            return
        tied = index[tied_mask]
        negatives = draw_distinct(
            rng, pool, maker.measure.format.n_options - 1, {*tied.tolist(), *seen.tolist()}, weights
        )
        if negatives is None:
            return
        entry = ctx.entity_entry(self.kind, t)
        maker.add(
            rng,
            target=Target(kind=self.kind, id=entry.id, text=entry.text),
            positive=ctx.entity_entry(self.key_kind, int(tied[0])),
            negatives=[ctx.entity_entry(self.key_kind, int(j)) for j in negatives],
            evidence={"cosine": round(top, 6), "tied_positives": len(tied), "excluded_seen": len(seen)},
        )
