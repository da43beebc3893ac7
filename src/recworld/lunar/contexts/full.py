"""``full``: the profile and the whole log, or the newest records that fit the answer model's window.

The budget is the answer model's window less the answer cap, the system prompt, the
longest request and a template margin, counted in that model's tokens
(:mod:`recworld.lunar.llm.budget`); ``--budget-tokens`` only caps it. When the log
does not fit, the newest records that fit are shown in time order, and what was
dropped is this setting's :meth:`~FullContext.coverage` per query (reported as
"truncated logs").
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from recworld.console.options import Flag
from recworld.lunar.contexts.base import (
    ASSISTANT_SYSTEM,
    ContextEnv,
    ContextSetting,
    Coverage,
    Preparation,
    Sessions,
    answer_prompt,
)
from recworld.lunar.llm.budget import CharEstimate, TokenCounter, counter_for, full_budget, window_of
from recworld.lunar.llm.plan import PlannedStage
from recworld.lunar.schemas import BehaviourRecord, EvalInputs, Query, Rubric, UserData, records_block
from recworld.records import FrozenRecord


class FullOptions(FrozenRecord):
    budget_tokens: Annotated[
        int | None,
        Field(ge=1, description="Cap on the full-context budget."),
        Flag("--budget-tokens", default_help="the answer model's window less answer, prompt"),
    ] = None


class FullContext(ContextSetting[FullOptions]):
    name = "full"
    summary = "the profile and all records (the newest that fit the answer model's window)"
    order = 1
    default = True
    needs_embedder = False
    options_type = FullOptions

    def __init__(self, options: FullOptions) -> None:
        super().__init__(options)
        self.counter: TokenCounter = CharEstimate()
        self.budget_tokens = options.budget_tokens or 0
        self._coverage: dict[str, Coverage] = {}  # per query id: what the last build showed

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        return {}

    async def prepare(self, env: ContextEnv) -> Preparation:
        """The budget and the counter, from the answer model's tokenizer and window."""
        completer = env.answer_llm.completer
        self.counter = counter_for(completer, env.sessions.answer.name)
        self.budget_tokens = full_budget(
            self.counter,
            window=window_of(completer, env.sessions.answer.backend.n_ctx),
            answer_tokens=env.answer_max_tokens,
            system=ASSISTANT_SYSTEM,
            requests=[answer_prompt("", q) + "\n\nUser request: " for q, _ in env.inputs.pairs],
            cap=self.options.budget_tokens,
        )
        return Preparation()

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        head = f"User profile:\n{user.profile.describe()}\n\nBehaviour records:\n"
        left = self.budget_tokens - self.counter.count(head)
        kept: list[BehaviourRecord] = []
        for r in sorted(user.records, key=lambda r: (r.timestamp, r.record_id), reverse=True):
            cost = self.counter.count(r.to_line()) + 1
            if cost > left:
                break
            kept.append(r)
            left -= cost
        text = head + records_block(sorted(kept, key=lambda r: (r.timestamp, r.record_id)))
        self._coverage[query.query_id] = Coverage(
            shown=len(kept),
            total=len(user.records),
            tokens=self.budget_tokens - left,
            budget=self.budget_tokens,
            counter=self.counter.identity,
        )
        return text

    def coverage(self, query_id: str) -> Coverage | None:
        return self._coverage.get(query_id)

    def close(self) -> None:
        return None
