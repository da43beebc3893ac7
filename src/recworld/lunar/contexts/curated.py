"""``curated``: the rubric's evidence records only (the ideal retriever)."""

from __future__ import annotations

from recworld.lunar.contexts.base import ContextEnv, ContextSetting, Coverage, NoOptions, Preparation
from recworld.lunar.contexts.roles import Sessions
from recworld.lunar.llm.plan import PlannedStage
from recworld.lunar.schemas import EvalInputs, Query, Rubric, UserData, records_block


class CuratedContext(ContextSetting[NoOptions]):
    name = "curated"
    summary = "the rubric's evidence records only (the ideal retriever)"
    order = 2
    default = True
    needs_embedder = False
    options_type = NoOptions

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        return {}

    async def prepare(self, env: ContextEnv) -> Preparation:
        return Preparation()

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        wanted = set(rubric.evidence.record_ids)
        chosen = sorted((r for r in user.records if r.record_id in wanted), key=lambda r: r.timestamp)
        head = "Relevant behaviour records (the user's local time):\n"
        return head + records_block(chosen, user.zone) if chosen else ""

    def coverage(self, query_id: str) -> Coverage | None:
        return None

    def close(self) -> None:
        return None
