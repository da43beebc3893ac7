"""``assoc_rule``: given an antecedent item, pick the consequent of its strongest mined rule.

Ground truth: pair rules {a} -> {c} mined from users' histories taken as
transactions (support and confidence at least the configured minimum). The
positive set is every consequent tied with the antecedent's top rule by
``rules`` (confidence, the paper's metric, or lift; :func:`rule_label`); the
one shown is drawn from it with the seed, never the lowest index. Negatives
are what is wrong for *this* antecedent: any item but the antecedent and its
consequents within ``rule_margin`` of the top, so a weaker consequent may be
a (hard) negative; uniform or popularity-weighted (``negatives``), never
reading like the target or a kept-out consequent (same folded text or title,
:mod:`recworld.lrworld.options`). The paper (Apriori via mlxtend) says
nothing of negatives beyond "random"; excluding every consequent, as before
manifest/4 (``rule_margin`` None), made 11 blockbusters on ML-100K the
answer at least 95 % of the times they were shown. An antecedent whose top consequent is a
variant of itself (same folded title: two ASINs of one product bought
together) is not asked, and counted in the manifest's ``filters``.
"""

from __future__ import annotations

import numpy as np

from recworld.lrworld.builders.base import (
    QuestionMaker,
    draw_distinct,
    matched_weights,
    negative_weights,
    pick_order,
)
from recworld.lrworld.context import TIE_TOLERANCE, BuildContext
from recworld.lrworld.measure import Measure
from recworld.lrworld.schema import Question, Target


class AssocRuleBuilder:
    def unavailable(self, ctx: BuildContext) -> str | None:
        if len(ctx.rules) == 0:
            return (
                f"no pair rule reaches support {ctx.config.min_support} "
                f"and confidence {ctx.config.min_confidence}"
            )
        return None

    def build(self, ctx: BuildContext, measure: Measure, rng: np.random.Generator) -> list[Question]:
        rules = ctx.rules
        antecedents, starts = np.unique(rules.antecedent, return_index=True)
        ends = np.append(starts[1:], len(rules))
        maker = QuestionMaker(ctx, measure)
        pool = np.arange(ctx.n_items, dtype=np.int64)
        weights = negative_weights(ctx, "item", pool)
        n_negatives = measure.format.n_options - 1
        metric = rules.lift if ctx.config.rules == "lift" else rules.confidence
        for pick in pick_order(rng, len(antecedents), ctx.config.per_measure):
            if maker.full:
                break
            a, lo, hi = int(antecedents[pick]), int(starts[pick]), int(ends[pick])
            tied, kept_out = rule_label(rules.consequent[lo:hi], metric[lo:hi], ctx.config.rule_margin)
            shown = [int(c) for c in tied if ctx.item_identities[int(c)] != ctx.item_identities[a]]
            if not shown:
                # A top rule leads to a variant of the target (two ASINs of one product bought together).
                maker.drop("positive_reads_like_target")
                continue
            best = shown[int(rng.integers(len(shown)))] if len(shown) > 1 else shown[0]
            guard = ctx.option_guard("item", [a, *kept_out.tolist()])
            drawn_weights = matched_weights(ctx, "item", pool, weights, best)
            negatives = draw_distinct(rng, pool, n_negatives, {a, *kept_out.tolist()}, drawn_weights, guard)
            if negatives is None:
                maker.drop("too_few_negatives")
                continue
            added = maker.add(
                rng,
                target=Target(kind="item", id=str(ctx.matrix.item_ids[a]), text=ctx.item_texts[a]),
                positive=ctx.item_entry(best),
                negatives=[ctx.item_entry(int(j)) for j in negatives],
                evidence={
                    "support": round(float(rules.support[lo]), 6),
                    "confidence": round(float(rules.confidence[lo]), 6),
                    "lift": round(float(rules.lift[lo]), 6),
                    "rules_from_antecedent": hi - lo,
                    "tied_positives": len(tied),
                    "kept_out": len(kept_out),
                    "ranked_by": ctx.config.rules,
                },
            )
            if added is not None:
                if len(tied) > 1:
                    maker.merge("tied_top_rules")
                if hi - lo > len(kept_out):
                    maker.merge("weaker_consequents_may_be_negatives")
        return maker.questions


def rule_label(
    consequents: np.ndarray, metric: np.ndarray, margin: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """The label of one antecedent: consequents tied with its top rule, and those never offered as wrong.

    ``consequents``/``metric`` are its rules best first. The positive set is
    every consequent whose metric ties the top (within
    :data:`~recworld.lrworld.context.TIE_TOLERANCE`). Kept out of the
    negatives: the consequents within ``margin`` of the top (near ties, neither
    right nor clearly wrong); with ``margin`` None, every consequent (the
    behaviour before manifest/4, which made a blockbuster that is some rule's
    consequent almost everywhere the answer whenever it was shown).
    """
    top = float(metric[0])
    tied = consequents[metric >= top - TIE_TOLERANCE]
    kept_out = consequents if margin is None else consequents[metric >= top - margin - TIE_TOLERANCE]
    return np.asarray(tied, dtype=np.int64), np.asarray(kept_out, dtype=np.int64)
