"""The request plans of ``lunar ablate`` and ``lunar rate``, for their progress totals and cost estimate.

``synth``, ``queries`` and ``eval`` have a ``--dry-run`` whose plan lives beside each
stage; these two commands have none, so their counts are made here from the same
inputs the commands read, with :func:`recworld.lunar.llm.plan.planned`.
"""

from __future__ import annotations

from recworld.lunar.answering.ablate import variants
from recworld.lunar.config import AblateConfig, RateConfig
from recworld.lunar.llm.plan import PlannedStage, planned
from recworld.lunar.store import dataset as store

__all__ = ["plan_ablate", "plan_rate"]

RATING_TOKENS = 96  # lunar rate's reply cap per rating


def plan_ablate(config: AblateConfig) -> dict[str, PlannedStage]:
    """An answer and a judgment per query of every variant the queries fill."""
    inputs = store.load_eval_inputs(config.root)
    table = variants(inputs.pairs, store.records(config.root), k_max=config.k_max, seed=config.seed)
    n = sum(len(pairs) for pairs in table.values())
    return {
        "answer": planned(config.answer.name, n, config.answer_max_tokens, exact=True),
        "judge": planned(config.judge.name, n, config.judge.max_tokens, exact=True),
    }


def plan_rate(config: RateConfig) -> dict[str, PlannedStage]:
    """Two ratings per user with a trajectory (plausibility, profile), one per query when they are rated."""
    planned_users = {t.user_id for t in store.trajectories(config.root)}
    users = sum(p.user_id in planned_users for p in store.profiles(config.root))
    queries = (
        len(store.queries(config.root)) if config.queries and (config.root / "queries.jsonl").exists() else 0
    )
    name = config.llm.name
    return {
        "rate-plausibility": planned(name, users, RATING_TOKENS, exact=True),
        "rate-profile": planned(name, users, RATING_TOKENS, exact=True),
        "rate-query": planned(name, queries, RATING_TOKENS, exact=True),
    }
