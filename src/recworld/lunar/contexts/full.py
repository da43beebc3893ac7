"""``full``: the profile and the whole log, or the newest records that fit the answer model's window.

The window is the answer model's real one (:func:`recworld.lunar.llm.budget.window_for`:
what the model or its server reports, ``--context-window``, the known-model table, or
the assumed ``--n-ctx``). The budget is that window less the answer cap, the system
prompt, the longest request and a template margin, counted in the model's own tokens
when it has a tokenizer, else estimated and labelled so; ``--budget-tokens`` only
caps it. When the log does not fit, the newest records that fit are shown in time
order, and what was dropped is this setting's :meth:`~FullContext.coverage` per query
(reported as "truncated logs", with the window and where it came from). Records are
shown in the user's local time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar

from pydantic import Field

from recworld.console.options import Flag
from recworld.lunar.contexts.base import ContextEnv, ContextSetting, Coverage, Preparation, answer_prompt
from recworld.lunar.contexts.roles import Sessions
from recworld.lunar.llm.budget import (
    CharEstimate,
    TokenCounter,
    Window,
    counter_for,
    discover,
    full_budget,
    window_for,
)
from recworld.lunar.llm.plan import PlannedStage
from recworld.lunar.schemas import BehaviourRecord, EvalInputs, Query, Rubric, UserData, records_block
from recworld.records import MAX_TOKENS, FrozenRecord, Settings


class FullOptions(FrozenRecord, Settings):
    budget_tokens: Annotated[
        int | None,
        Field(ge=1, le=MAX_TOKENS, description="Cap on the full-context budget."),
        Flag("--budget-tokens", default_help="the answer model's window less answer, prompt"),
    ] = None


class FullContext(ContextSetting[FullOptions]):
    name = "full"
    summary = "the profile and all records (the newest that fit the answer model's window)"
    order = 1
    default = True
    needs_embedder = False
    options_type = FullOptions
    old_keys: ClassVar[Mapping[str, str]] = {"budget_tokens": "budget_tokens"}  # run.json before eval/3
    smoke = True  # the --smoke preset's one context: it shows every stage with the fewest calls
    privacy_default = True  # the paper scores privacy on full-context answers (its Fig. 4)

    def __init__(self, options: FullOptions) -> None:
        super().__init__(options)
        self.counter: TokenCounter = CharEstimate()
        self.budget_tokens = options.budget_tokens or 0
        self.window: Window | None = None
        self._coverage: dict[str, Coverage] = {}  # per query id: what the last build showed

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        return {}

    async def prepare(self, env: ContextEnv) -> Preparation:
        """The budget and the counter, from the answer model's tokenizer and real window."""
        model = env.answer_llm.model
        await discover(model)
        self.counter = counter_for(model, env.sessions.answer.name)
        self.window = window_for(model, env.sessions.answer)
        self.budget_tokens = full_budget(
            self.counter,
            window=self.window.tokens,
            answer_tokens=env.answer_max_tokens,
            system=env.system,
            requests=[answer_prompt("", q) + "\n\nUser request: " for q, _ in env.inputs.pairs],
            cap=self.options.budget_tokens,
        )
        return Preparation()

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        head = f"User profile:\n{user.profile.describe()}\n\nBehaviour records (the user's local time):\n"
        left = self.budget_tokens - self.counter.count(head)
        kept: list[BehaviourRecord] = []
        for r in sorted(user.records, key=lambda r: (r.timestamp, r.record_id), reverse=True):
            cost = self.counter.count(r.to_line(user.zone)) + 1
            if cost > left:
                break
            kept.append(r)
            left -= cost
        text = head + records_block(sorted(kept, key=lambda r: (r.timestamp, r.record_id)), user.zone)
        self._coverage[query.query_id] = Coverage(
            shown=len(kept),
            total=len(user.records),
            tokens=self.budget_tokens - left,
            budget=self.budget_tokens,
            counter=self.counter.identity,
            window=self.window.tokens if self.window else None,
            window_source=self.window.source if self.window else None,
        )
        return text

    def coverage(self, query_id: str) -> Coverage | None:
        return self._coverage.get(query_id)

    def close(self) -> None:
        return None
