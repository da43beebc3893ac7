"""Context settings: what the answering model sees about the user.

=========  ===========================================================================
none       nothing: the no-personalisation floor
full       profile + all records; if they do not fit the answer model's window, the
           newest records that fit, counted in that model's tokens (see
           :mod:`recworld.lunar.budget`), shown in time order; what was dropped is
           recorded per query (:attr:`FullContext.coverage`) and reported
curated    the rubric's evidence records only (the ideal retriever)
rag        records as text lines, embedded; the top-k (30) by cosine with the query
memory     agentic memory: atomic facts distilled from batches of 10 records, kept in
           Qdrant, top-k (50) by the query (:mod:`recworld.lunar.memory`)
=========  ===========================================================================

A setting is a :class:`ContextBuilder`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import numpy as np

from recworld.errors import ConfigError
from recworld.lunar.budget import CharEstimate, TokenCounter
from recworld.lunar.embed import Embedder
from recworld.lunar.schemas import BehaviourRecord, Profile, Query, Rubric


class ContextSetting(StrEnum):
    NONE = "none"
    FULL = "full"
    CURATED = "curated"
    RAG = "rag"
    MEMORY = "memory"


@dataclass(frozen=True)
class UserData:
    profile: Profile
    records: tuple[BehaviourRecord, ...]


class ContextBuilder(Protocol):
    setting: ContextSetting

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        """The user context text ('' for none)."""
        ...


def estimate_tokens(text: str) -> int:
    """The characters/4 estimate (the fallback counter; see :mod:`recworld.lunar.budget`)."""
    return CharEstimate().count(text)


def _records_block(records: Sequence[BehaviourRecord]) -> str:
    return "\n".join(r.to_line() for r in records)


class NoContext:
    setting = ContextSetting.NONE

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        return ""


@dataclass(frozen=True)
class Coverage:
    """How much of the user's log one Full context showed (``shown < total`` means truncated)."""

    shown: int
    total: int
    tokens: int
    budget: int
    counter: str

    @property
    def dropped(self) -> int:
        return self.total - self.shown


class FullContext:
    setting = ContextSetting.FULL

    def __init__(self, budget_tokens: int = 3000, counter: TokenCounter | None = None) -> None:
        self.budget_tokens = budget_tokens
        self.counter: TokenCounter = counter or CharEstimate()
        # Per query id: what the last build showed (read by the answering step for the report).
        self.coverage: dict[str, Coverage] = {}

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
        text = head + _records_block(sorted(kept, key=lambda r: (r.timestamp, r.record_id)))
        self.coverage[query.query_id] = Coverage(
            shown=len(kept),
            total=len(user.records),
            tokens=self.budget_tokens - left,
            budget=self.budget_tokens,
            counter=self.counter.identity,
        )
        return text


class CuratedContext:
    setting = ContextSetting.CURATED

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        wanted = set(rubric.evidence.record_ids)
        chosen = sorted((r for r in user.records if r.record_id in wanted), key=lambda r: r.timestamp)
        return "Relevant behaviour records:\n" + _records_block(chosen) if chosen else ""


class RagContext:
    setting = ContextSetting.RAG

    def __init__(self, embedder: Embedder, k: int = 30) -> None:
        self.embedder = embedder
        self.k = k

    def retrieve(self, records: Sequence[BehaviourRecord], query: str) -> list[BehaviourRecord]:
        """Top-k records by cosine, best first (ties by record id)."""
        if not records:
            return []
        lines = [r.to_line() for r in records]
        vectors = self.embedder.embed([*lines, query])
        scores = vectors[:-1] @ vectors[-1]
        order = sorted(range(len(records)), key=lambda i: (-float(scores[i]), records[i].record_id))
        return [records[i] for i in order[: self.k]]

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        hits = self.retrieve(list(user.records), query.text)
        return "Retrieved behaviour records:\n" + _records_block(hits) if hits else ""


def make_builder(
    setting: ContextSetting,
    *,
    embedder: Embedder | None = None,
    budget_tokens: int = 3000,
    rag_k: int = 30,
    counter: TokenCounter | None = None,
    memory_root: Path | None = None,
    memory_k: int = 50,
    qdrant_url: str | None = None,
) -> ContextBuilder:
    if setting is ContextSetting.NONE:
        return NoContext()
    if setting is ContextSetting.FULL:
        return FullContext(budget_tokens, counter)
    if setting is ContextSetting.CURATED:
        return CuratedContext()
    if embedder is None:
        raise ConfigError(f"the {setting.value} context needs an embedder (--embedder)")
    if setting is ContextSetting.RAG:
        return RagContext(embedder, rag_k)
    if memory_root is None:
        raise ConfigError("the memory context needs a run folder for its fact store")
    from recworld.lunar.memory import MemoryContext

    return MemoryContext(embedder, memory_root, url=qdrant_url, k=memory_k)


def parse_settings(text: str) -> list[ContextSetting]:
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            out.append(ContextSetting(part))
        except ValueError as exc:
            known = ", ".join(s.value for s in ContextSetting)
            raise ConfigError(f"unknown context {part!r}; known: {known}") from exc
    if not out:
        raise ConfigError("no context setting given")
    return out


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return 0.0 if na == 0 or nb == 0 else float(a @ b) / (na * nb)
