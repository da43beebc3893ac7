"""``lunar queries --dry-run``: the query prompts rendered exactly, the rubric stages as upper bounds."""

from __future__ import annotations

from recworld.lunar.config import QueriesConfig
from recworld.lunar.llm.plan import PlannedStage, check_spec, planned
from recworld.lunar.queries.generate import active_domains, exemplars, load_seeds, query_prompt
from recworld.lunar.schemas import Category
from recworld.lunar.store import dataset as store


def plan_queries(config: QueriesConfig) -> dict[str, PlannedStage]:
    """Requests per query-writing stage: queries exact, rubric stages upper bounds."""
    check_spec(config.llm)
    per_user, seed, llm = config.per_user, config.seed, config.llm
    profiles, records = store.profiles(config.root), store.records(config.root)
    domains: dict[str, set[Category]] = {}
    for r in records:
        domains.setdefault(r.user_id, set()).add(r.domain)
    pool, prompts = load_seeds(), []
    for p in profiles:
        active = active_domains(p, domains.get(p.user_id, set()))
        for k in range(per_user):
            prompts.append(query_prompt(p, active, exemplars(pool, seed, p.user_id, k), k + 1))
    n = len(prompts)
    per_domain = sum(len(domains.get(p.user_id, ())) for p in profiles) * per_user
    name, cap = llm.name, llm.max_tokens
    return {
        "query": planned(name, n, 160, prompts, exact=True),
        "generic-answer": planned(name, n, 256, exact=False),
        "rubric-domain": planned(name, per_domain, cap, exact=False),
        "rubric-effects": planned(name, n, cap, exact=False),
        "rubric-aggregate": planned(name, n, cap, exact=False),
    }
