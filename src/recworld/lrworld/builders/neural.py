"""``neu_item2users`` / ``neu_user2items``: pick the closest entity in the NeuMF cosine space.

Ground truth: NeuMF (the miner's ``train_neumf``) gives user and item vectors,
its GMF factors trained to rank by cosine (docs/mining.md says why this is what
"cosine of NeuMF embeddings" became); the answer is the key with the highest
cosine to the target's vector. Targets are spread over spherical k-means
clusters (the geometry retrieval uses) of the target side's vectors
(``kmeans_clusters``, paper: 10) with the miner's ``kmeans_pick``. Only pairs
not seen in training are ranked, as a recommender would rank them: the users
who already interacted with a target item (or the items a target user already
has) are neither the answer nor negatives. Positive set: the unseen keys tied
with the top cosine (the one shown drawn with the seed). Negatives: the
remaining unseen keys, uniform or popularity-weighted (``negatives``), drawn through the same option guard as
every builder (no text or title alike with the positive).

The ground truth is only as good as the space behind it, so before any
question is made the space's own held-out HR@10 must beat popularity's by
more than :data:`WEAK_NEUMF_Z` standard errors (``check_neumf``). Otherwise the
builder raises :class:`~recworld.lrworld.gates.WeakGroundTruth`: the build
skips the neu_* measures with the figures in the manifest, fails instead with
``require_neural`` (:class:`WeakNeuMFError`, exit 3), or builds them anyway
with ``allow_weak_neumf``. ``neumf_record`` puts the check and the training
curve into the manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from recworld import mining
from recworld.lrworld.builders.base import (
    QuestionMaker,
    draw_distinct,
    draw_one,
    matched_weights,
    negative_weights,
)
from recworld.lrworld.builders.memory import target_view
from recworld.lrworld.context import NEIGHBOUR_K, TIE_TOLERANCE, BuildContext, EntityKind
from recworld.lrworld.gates import NEURAL_GATE, WeakGateError, WeakGroundTruth
from recworld.lrworld.manifest import NeuMFCheck, NeuMFEpoch
from recworld.lrworld.measure import Measure
from recworld.lrworld.schema import Question, Target
from recworld.seeding import child_seed

# Targets retrieved per dense_cosine_topk call: bounds the (targets x keys) score block.
_CHUNK = 128
# The cosine space "beats popularity" when its held-out HR@10 exceeds popularity's by more than this
# many standard errors of the paired per-user gap (about 2.3 % one-sided false-pass rate on noise).
WEAK_NEUMF_Z = 2.0


class WeakNeuMFError(WeakGateError):
    """``require_neural``: the NeuMF cosine space does not beat popularity on held-out items."""


_BUILD_ANYWAY = (
    "train longer (BuildConfig.neumf) or pass --allow-weak-neumf to build the neu_* measures anyway"
)


def check_neumf(info: dict[str, Any], allow_weak: bool) -> NeuMFCheck:
    """The manifest record of a NeuMF run, with the verdict of its cosine space against popularity."""
    space, popularity = info.get("hr@10_embedding"), info.get("hr@10_popularity")
    se = info.get("hr@10_embedding_gap_se")
    if space is None or popularity is None:
        verdict = "unchecked"
    elif space - popularity > WEAK_NEUMF_Z * (se if se is not None else 0.0):
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
    tau = info.get("gmf_tau")
    return NeuMFCheck(
        eval_users=info.get("eval_users", 0),
        eval_candidates=info.get("eval_candidates"),
        epochs_run=len(curve),
        best_epoch=info.get("best_epoch", len(curve)),
        stopped_early=bool(info.get("stopped_early", False)),
        curve=curve,
        hr_at_10=info.get("hr@10"),
        hr_at_10_popularity=popularity,
        hr_at_10_embedding=space,
        gap_se=info.get("hr@10_gap_se"),
        verdict=verdict,
        allowed_weak=allow_weak and verdict == "weak",
        space=info.get("embedding_space"),
        embedding_gap_se=se,
        gmf_tau=None if tau is None else round(float(tau), 6),
    )


def weak_neural(check: NeuMFCheck) -> WeakGroundTruth:
    """The gate's verdict on a weak space, with the figures a reader needs."""
    se = check.embedding_gap_se or 0.0
    reason = (
        f"the NeuMF cosine space does not beat popularity on held-out items: HR@10 "
        f"{check.hr_at_10_embedding:.3f} against {check.hr_at_10_popularity:.3f} over {check.eval_users} "
        f"users (needs a gap above {WEAK_NEUMF_Z:g} standard errors, {WEAK_NEUMF_Z * se:.3f})"
    )
    return WeakGroundTruth(NEURAL_GATE, reason, _figures(check), error=WeakNeuMFError, hint=_BUILD_ANYWAY)


def _figures(check: NeuMFCheck) -> dict[str, float | int | None]:
    return {
        "hr_at_10_embedding": check.hr_at_10_embedding,
        "hr_at_10_popularity": check.hr_at_10_popularity,
        "gap_se": check.embedding_gap_se,
        "z": WEAK_NEUMF_Z,
        "eval_users": check.eval_users,
        "hr_at_10_model": check.hr_at_10,
    }


def require_useful_neumf(ctx: BuildContext, measure_id: str) -> NeuMFCheck:
    """The check, noted in the build's gate log; :class:`WeakGroundTruth` when weak and not allowed."""
    allow = ctx.config.allow_weak_neumf
    check = check_neumf(ctx.neumf.info, allow)
    if check.verdict == "weak":
        weak = weak_neural(check)
        if not allow:
            raise weak
        ctx.gates.note(
            NEURAL_GATE,
            measure_id,
            passed=False,
            outcome="built_weak",
            reason=weak.reason,
            figures=weak.figures,
        )
    else:
        figures = _figures(check)
        reason = (
            "held-out checks off (eval_users=0 or too little data): unchecked"
            if check.verdict == "unchecked"
            else f"the NeuMF cosine space beats popularity on held-out HR@10 by more than {WEAK_NEUMF_Z:g} SE"
        )
        ctx.gates.note(NEURAL_GATE, measure_id, passed=True, outcome="built", reason=reason, figures=figures)
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
        require_useful_neumf(ctx, measure.id)  # WeakGroundTruth: the suite build skips the measure
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
                geometry="cosine",  # the geometry the answers are retrieved in
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
                nb = mining.dense_cosine_topk(
                    queries[chunk], keys, k, exclude=seen_table[chunk], positive_only=False
                )
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
            maker.drop("no_unseen_key")
            return
        top = float(score[unseen][0])
        tied_mask = unseen & (score >= top - TIE_TOLERANCE)
        # Ties reaching the last returned slot may continue past it: skip, do not guess.
        if k < len(pool) - len(seen) and tied_mask[-1]:
            maker.drop("ties_past_returned_neighbours")
            return
        tied = index[tied_mask]
        positive = draw_one(tied, rng)  # equally right keys: never the first by index
        if self.kind == "item" and ctx.item_identities[t] in {
            ctx.item_identities[int(j)] for j in ctx.sequences.of(positive)[-ctx.config.history_length :]
        }:
            # The best user is shown by a variant of the target item: the option would read as "has it".
            maker.drop("positive_shows_target")
            return
        guard = ctx.option_guard(self.key_kind, tied.tolist())
        negatives = draw_distinct(
            rng,
            pool,
            maker.measure.format.n_options - 1,
            {*tied.tolist(), *seen.tolist()},
            matched_weights(ctx, self.key_kind, pool, weights, positive),
            guard,
        )
        if negatives is None:
            maker.drop("too_few_negatives")
            return
        entry = ctx.entity_entry(self.kind, t)
        recent = ctx.sequences.of(t)[-ctx.config.history_length :].tolist() if self.kind == "user" else []
        target_items = [ctx.item_entry(int(j)) for j in recent]
        maker.add(
            rng,
            target=Target(kind=self.kind, id=entry.id, text=entry.text),
            positive=ctx.entity_entry(self.key_kind, positive),
            negatives=[ctx.entity_entry(self.key_kind, int(j)) for j in negatives],
            evidence={
                "cosine": round(top, 6),
                "tied_positives": len(tied),
                "excluded_seen": len(seen),
                **target_view(ctx, self.kind, t),
            },
            target_items=target_items,
        )
