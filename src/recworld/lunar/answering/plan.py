"""``lunar eval --dry-run``: per context an answer per query, each setting's build-up step, the judges.

The answers of a setting that declares its context text
(:attr:`~recworld.lunar.contexts.ContextSetting.fixed_context`; the no-context floor's is
empty, so its prompts are the requests alone) are rendered exactly; the other answers
are counted exactly but built at run time. Each setting says what
its own preparation asks (:meth:`~recworld.lunar.contexts.ContextSetting.plan`:
batches its own model distils, for example), and the model of every role the chosen
settings declare is checked, so a new setting is counted without a change here.
"""

from __future__ import annotations

from recworld.lunar.answering.run import open_settings, sessions_of
from recworld.lunar.config import LunarEvalConfig
from recworld.lunar.contexts.base import answer_prompt
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.llm.plan import PlannedStage, check_spec, planned
from recworld.lunar.store.dataset import load_eval_inputs


def plan_eval(config: LunarEvalConfig) -> dict[str, PlannedStage]:
    """Requests per eval stage: each setting's build-up, an answer, a judgment (and privacy) per query."""
    own = [m for m in config.role_models() if isinstance(m, SessionConfig)]  # the settings' declared models
    check_spec(config.answer, config.judge, *own)
    inputs = load_eval_inputs(config.root, config.timezone)
    pairs = inputs.pairs
    sessions = sessions_of(config)
    stages: dict[str, PlannedStage] = {}
    for setting in open_settings(config):
        for stage, planned_stage in setting.plan(inputs, sessions).items():
            stages[f"{stage} ({setting.name})"] = planned_stage
        fixed = setting.fixed_context
        prompts = [answer_prompt(fixed, q) for q, _ in pairs] if fixed is not None else []
        stages[f"answer ({setting.name})"] = planned(
            config.answer.name,
            len(pairs),
            config.answer_max_tokens,
            prompts,
            exact=True,
            system=config.system_prompt,
        )
    n = len(pairs) * len(config.contexts)
    stages["judge"] = planned(config.judge.name, n, config.judge.max_tokens, exact=True)
    judged = sum(config.judges_privacy(c) for c in config.contexts)
    if judged:
        stages["privacy"] = planned(
            config.judge.name, len(pairs) * judged, config.judge.max_tokens, exact=True
        )
    return stages
