"""``rag``: records as text lines, embedded; the top-k (``--rag-k``, 30) by cosine with the query."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, tzinfo
from typing import TYPE_CHECKING, Annotated, ClassVar

from pydantic import Field

from recworld.console.options import Flag
from recworld.errors import ConfigError
from recworld.lunar.contexts.base import ContextEnv, ContextSetting, Coverage, Preparation
from recworld.lunar.contexts.roles import Sessions
from recworld.lunar.llm.plan import PlannedStage
from recworld.lunar.schemas import BehaviourRecord, EvalInputs, Query, Rubric, UserData, records_block
from recworld.records import MAX_INT, FrozenRecord, Settings

if TYPE_CHECKING:
    from recworld.runner import BlockingEmbedder


class RagOptions(FrozenRecord, Settings):
    k: Annotated[
        int, Field(ge=1, le=MAX_INT, description="Records retrieved for the rag context."), Flag("--rag-k")
    ] = 30


class RagContext(ContextSetting[RagOptions]):
    name = "rag"
    summary = "records embedded as text lines; the top-k by cosine with the request"
    order = 3
    default = True
    needs_embedder = True
    options_type = RagOptions
    old_keys: ClassVar[Mapping[str, str]] = {"rag_k": "k"}  # run.json before recworld.lunar.eval/3

    def __init__(self, options: RagOptions, embedder: BlockingEmbedder | None = None) -> None:
        super().__init__(options)
        self.embedder = embedder

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        return {}

    async def prepare(self, env: ContextEnv) -> Preparation:
        if env.embedder is None:
            raise ConfigError("the rag context needs an embedder (--embedder)")
        self.embedder = env.embedder
        return Preparation()

    def retrieve(
        self, records: Sequence[BehaviourRecord], query: str, tz: tzinfo = UTC
    ) -> list[BehaviourRecord]:
        """Top-k records by cosine of their lines (in zone ``tz``) with ``query``, best first (ties by id)."""
        if not records:
            return []
        if self.embedder is None:
            raise RuntimeError("RagContext.prepare must run before retrieve")
        lines = [r.to_line(tz) for r in records]
        vectors = self.embedder.embed([*lines, query])
        scores = vectors[:-1] @ vectors[-1]
        order = sorted(range(len(records)), key=lambda i: (-float(scores[i]), records[i].record_id))
        return [records[i] for i in order[: self.options.k]]

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        hits = self.retrieve(list(user.records), query.text, user.zone)
        head = "Retrieved behaviour records (the user's local time):\n"
        return head + records_block(hits, user.zone) if hits else ""

    def coverage(self, query_id: str) -> Coverage | None:
        return None

    def close(self) -> None:
        return None
