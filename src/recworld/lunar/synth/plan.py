"""``lunar synth --dry-run``: profiles rendered exactly, the later stages as upper bounds."""

from __future__ import annotations

from recworld.lunar.anchors import load_anchors
from recworld.lunar.config import SynthConfig
from recworld.lunar.llm.plan import PlannedStage, check_spec, planned
from recworld.lunar.synth.profile import PROFILE_TOKENS, profile_prompt


def plan_synth(config: SynthConfig) -> dict[str, PlannedStage]:
    """Requests per synthesis stage for ``config``; profiles exact, the rest upper bounds."""
    check_spec(config.llm)
    o = config.options
    users = load_anchors(
        config.anchors,
        config.users,
        seed=config.seed,
        min_domains=config.min_domains,
        domain_map=config.domain_map,
    )
    n, plans = len(users), len(users) * o.weeks * (o.max_regenerations + 1)
    name, cap = config.llm.name, config.llm.max_tokens
    prompts = [profile_prompt(u, o.use_anchors) for u in users]
    stages = {
        "profile": planned(name, n, PROFILE_TOKENS, prompts, exact=True),
        "week": planned(name, plans, cap, exact=False),
        "days": planned(name, plans, cap, exact=False),
        "slots": planned(name, plans * o.active_days, cap, exact=False),
    }
    if o.validate_weeks:
        for stage in ("validate-forward", "validate-backward", "validate-compare"):
            stages[stage] = planned(name, plans, cap, exact=False)
    records = n * o.weeks * o.active_days * o.max_slots_per_day
    stages["records"] = planned(name, records, cap, exact=False)
    return stages
