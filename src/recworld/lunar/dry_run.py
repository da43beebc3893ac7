"""``recworld lunar synth | queries | eval --dry-run``: what would be asked, and what it might cost.

Nothing is sent and nothing is written: inputs are read and prompts rendered in
memory. A stage whose prompts come from the inputs alone (profiles, queries, the
``none`` answer) is counted exactly and its first prompt shown; a stage whose
prompts are built from earlier replies (weeks, records, rubrics, judgments) is
counted as an upper bound from the options (retries excluded). Prompt tokens are
estimated at 4 characters per token; replies are counted at their token cap, so
the cost is an upper bound for the priced stages and covers only stages whose
prompts could be rendered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from recworld.lunar.config import LunarEvalConfig, QueriesConfig, SessionConfig, SynthConfig
from recworld.scoring.prices import Price

CHARS_PER_TOKEN = 4
DATA_SYSTEM = "You are a careful data generator. Answer with JSON only."  # StructuredLLM's default


def _stage(
    requests: int, reply_tokens: int, prompts: Sequence[str] = (), *, exact: bool, system: str = DATA_SYSTEM
) -> dict[str, Any]:
    chars = sum(len(system) + len(p) for p in prompts)
    return {
        "requests": requests,
        "exact": exact,
        "prompt_tokens": -(-chars // CHARS_PER_TOKEN) if prompts else None,
        "max_reply_tokens": requests * reply_tokens,
        "first_prompt": (
            [{"role": "system", "content": system}, {"role": "user", "content": prompts[0]}]
            if prompts
            else None
        ),
    }


def _check_spec(*sessions: SessionConfig) -> None:
    from recworld.models import ModelSpec

    for s in sessions:
        ModelSpec.parse(s.model)  # an unknown backend fails here, with "did you mean"


def plan_synth(config: SynthConfig) -> dict[str, dict[str, Any]]:
    """Requests per synthesis stage for ``config``; profiles exact, the rest upper bounds."""
    from recworld.lunar.anchors import load_anchors
    from recworld.lunar.synth.profile import profile_prompt

    _check_spec(config.llm)
    o = config.options
    users = load_anchors(
        config.anchors,
        config.users,
        seed=config.seed,
        min_domains=config.min_domains,
        domain_map=config.domain_map,
    )
    n, plans = len(users), len(users) * o.weeks * (o.max_regenerations + 1)
    cap = config.llm.max_tokens
    stages = {
        "profile": _stage(n, 320, [profile_prompt(u, o.use_anchors) for u in users], exact=True),
        "week": _stage(plans, cap, exact=False),
        "days": _stage(plans, cap, exact=False),
        "slots": _stage(plans * o.active_days, cap, exact=False),
    }
    if o.validate_weeks:
        for name in ("validate-forward", "validate-backward", "validate-compare"):
            stages[name] = _stage(plans, cap, exact=False)
    records = n * o.weeks * o.active_days * o.max_slots_per_day
    stages["records"] = _stage(records, cap, exact=False)
    return stages


def plan_queries(config: QueriesConfig) -> dict[str, dict[str, Any]]:
    """Requests per query-writing stage: queries exact, rubric stages upper bounds."""
    from recworld.lunar import store
    from recworld.lunar.queries import _prompt, load_seeds
    from recworld.seeding import rng

    _check_spec(config.llm)
    profiles, records = store.profiles(config.root), store.records(config.root)
    domains: dict[str, set[Any]] = {}
    for r in records:
        domains.setdefault(r.user_id, set()).add(r.domain)
    pool, prompts = load_seeds(), []
    for p in profiles:
        active = sorted(domains.get(p.user_id, set()) or {a.category for a in p.affinities})
        for k in range(config.per_user):
            picks = rng(config.seed, "lunar", "queries", p.user_id, k).choice(
                len(pool), size=min(5, len(pool)), replace=False
            )
            prompts.append(_prompt(p, active, [pool[i] for i in picks], k + 1))
    n = len(prompts)
    per_domain = sum(len(domains.get(p.user_id, ())) for p in profiles) * config.per_user
    cap = config.llm.max_tokens
    return {
        "query": _stage(n, 160, prompts, exact=True),
        "generic-answer": _stage(n, 256, exact=False),
        "rubric-domain": _stage(per_domain, cap, exact=False),
        "rubric-effects": _stage(n, cap, exact=False),
        "rubric-aggregate": _stage(n, cap, exact=False),
    }


def plan_eval(config: LunarEvalConfig) -> dict[str, dict[str, Any]]:
    """Requests per eval stage: an answer, a judgment (and a privacy score) per query and context."""
    from recworld.lunar.answering import ASSISTANT_SYSTEM, answer_prompt
    from recworld.lunar.api import load_eval_inputs

    _check_spec(config.answer, config.judge)
    pairs = load_eval_inputs(config.root).pairs
    n = len(pairs) * len(config.contexts)
    stages: dict[str, dict[str, Any]] = {}
    for ctx in config.contexts:
        prompts = [answer_prompt("", q) for q, _ in pairs] if ctx.value == "none" else []
        stages[f"answer ({ctx.value})"] = _stage(
            len(pairs), config.answer_max_tokens, prompts, exact=True, system=ASSISTANT_SYSTEM
        )
    stages["judge"] = _stage(n, config.judge.max_tokens, exact=True)
    if config.privacy:
        stages["privacy"] = _stage(n, config.judge.max_tokens, exact=True)
    return stages


def price(
    stages: Mapping[str, dict[str, Any]], models: Mapping[str, str], prices: Mapping[str, Price]
) -> None:
    """Add ``cost_usd`` to each stage with rendered prompts and a priced model (``models``: stage -> spec)."""
    for name, stage in stages.items():
        rate = prices.get(models.get(name, ""))
        if rate is None or stage["prompt_tokens"] is None:
            stage["cost_usd"] = None
            continue
        stage["cost_usd"] = (
            stage["prompt_tokens"] * rate.input_per_m + stage["max_reply_tokens"] * rate.output_per_m
        ) / 1e6
