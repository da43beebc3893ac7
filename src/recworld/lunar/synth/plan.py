"""``lunar synth --dry-run``: profiles rendered exactly, the later stages as upper bounds.

The rendered prompts are built from the sanitised users exactly as a run builds them
(surrogates drawn under a throwaway key), then pass the run's leak scanner as well.
"""

from __future__ import annotations

from recworld.lunar.anchors import load_anchors, with_default_zone
from recworld.lunar.config import SynthConfig
from recworld.lunar.leaks import Scanner
from recworld.lunar.llm.plan import PlannedStage, check_spec, planned
from recworld.lunar.privacy import run_key, sanitise
from recworld.lunar.synth.profile import PROFILE_TOKENS, profile_prompt


def plan_synth(config: SynthConfig) -> dict[str, PlannedStage]:
    """Requests per synthesis stage for ``config``; profiles exact, the rest upper bounds."""
    check_spec(config.llm)
    o = config.options
    real = load_anchors(
        config.anchors,
        config.users,
        seed=config.seed,
        min_domains=config.min_domains,
        domain_map=config.domain_map,
    )
    real = with_default_zone(real, config.timezone or "UTC")
    scanner = Scanner.of((a.user_id, a.demographic, a.records) for a in real)
    users, _, _ = sanitise(real, run_key(None))  # what the model would see, under a throwaway key
    n, plans = len(users), len(users) * o.weeks * (o.max_regenerations + 1)
    name, cap = config.llm.name, config.llm.max_tokens
    prompts = [scanner.mask(profile_prompt(u, o.use_anchors)) for u in users]
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
