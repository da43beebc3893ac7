"""``none``: no user context at all, the no-personalisation floor."""

from __future__ import annotations

from recworld.lunar.contexts.base import ContextEnv, ContextSetting, Coverage, NoOptions, Preparation
from recworld.lunar.contexts.roles import Sessions
from recworld.lunar.llm.plan import PlannedStage
from recworld.lunar.schemas import EvalInputs, Query, Rubric, UserData


class NoContext(ContextSetting[NoOptions]):
    name = "none"
    summary = "nothing about the user (the no-personalisation floor)"
    order = 0
    default = True
    needs_embedder = False
    options_type = NoOptions
    fixed_context = ""  # build() shows nothing, whoever asks: the dry run renders these answers

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        return {}

    async def prepare(self, env: ContextEnv) -> Preparation:
        return Preparation()

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        return ""

    def coverage(self, query_id: str) -> Coverage | None:
        return None

    def close(self) -> None:
        return None
