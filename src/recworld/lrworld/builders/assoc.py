"""``assoc_rule``: given an antecedent item, pick the consequent of its strongest mined rule.

Ground truth: pair rules {a} -> {c} mined from users' histories taken as
transactions (support and confidence at least the configured minimum). The
positive is the consequent ranked first for the antecedent by ``rules``
(confidence, the paper's metric, or lift; ties: lowest item index, the
miner's order). Every consequent of any rule from that antecedent counts as a
positive, so none of them is ever a negative. Negatives: the other items,
uniform or popularity-weighted (``negatives``), never reading like the target,
the positive or another consequent (same folded text or title,
:mod:`recworld.lrworld.options`). An antecedent whose top consequent is a
variant of itself (same folded title: two ASINs of one product bought
together) is not asked, and counted in the manifest's ``filters``.
"""

from __future__ import annotations

import numpy as np

from recworld.lrworld.builders.base import QuestionMaker, draw_distinct, negative_weights, pick_order
from recworld.lrworld.context import BuildContext
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
        for pick in pick_order(rng, len(antecedents), ctx.config.per_measure):
            if maker.full:
                break
            a, lo, hi = int(antecedents[pick]), int(starts[pick]), int(ends[pick])
            consequents = rules.consequent[lo:hi]
            best = int(consequents[0])
            if ctx.item_identities[best] == ctx.item_identities[a]:
                maker.drop("positive_reads_like_target")  # the top rule leads to a variant of the target
                continue
            guard = ctx.option_guard("item", [a, *consequents.tolist()])
            negatives = draw_distinct(rng, pool, n_negatives, {a, *consequents.tolist()}, weights, guard)
            if negatives is None:
                maker.drop("too_few_negatives")
                continue
            maker.add(
                rng,
                target=Target(kind="item", id=str(ctx.matrix.item_ids[a]), text=ctx.item_texts[a]),
                positive=ctx.item_entry(best),
                negatives=[ctx.item_entry(int(j)) for j in negatives],
                evidence={
                    "support": round(float(rules.support[lo]), 6),
                    "confidence": round(float(rules.confidence[lo]), 6),
                    "lift": round(float(rules.lift[lo]), 6),
                    "rules_from_antecedent": hi - lo,
                    "ranked_by": ctx.config.rules,
                },
            )
        return maker.questions
