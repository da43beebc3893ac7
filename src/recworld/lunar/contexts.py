"""Context settings: what the answering model sees about the user.

=========  ===========================================================================
none       nothing: the no-personalisation floor
full       profile + all records; if they do not fit, the newest records that fit a
           token budget (estimated as characters / 4), shown in time order
curated    the rubric's evidence records only (the ideal retriever)
rag        records as text lines, embedded; the top-k (30) by cosine with the query
memory     reserved for agentic memory (Mem0-style fact store): not implemented yet
=========  ===========================================================================

A setting is a :class:`ContextBuilder`; adding memory means adding one class and
one entry in :func:`make_builder`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import numpy as np

from recworld.errors import ConfigError
from recworld.lunar.embed import Embedder
from recworld.lunar.schemas import BehaviourRecord, Profile, Query, Rubric

CHARS_PER_TOKEN = 4


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
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _records_block(records: Sequence[BehaviourRecord]) -> str:
    return "\n".join(r.to_line() for r in records)


class NoContext:
    setting = ContextSetting.NONE

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        return ""


class FullContext:
    setting = ContextSetting.FULL

    def __init__(self, budget_tokens: int = 3000) -> None:
        self.budget_tokens = budget_tokens

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        head = f"User profile:\n{user.profile.describe()}\n\nBehaviour records:\n"
        left = self.budget_tokens - estimate_tokens(head)
        kept: list[BehaviourRecord] = []
        for r in sorted(user.records, key=lambda r: (r.timestamp, r.record_id), reverse=True):
            cost = estimate_tokens(r.to_line()) + 1
            if cost > left:
                break
            kept.append(r)
            left -= cost
        return head + _records_block(sorted(kept, key=lambda r: (r.timestamp, r.record_id)))


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
    setting: ContextSetting, *, embedder: Embedder | None = None, budget_tokens: int = 3000, rag_k: int = 30
) -> ContextBuilder:
    if setting is ContextSetting.NONE:
        return NoContext()
    if setting is ContextSetting.FULL:
        return FullContext(budget_tokens)
    if setting is ContextSetting.CURATED:
        return CuratedContext()
    if setting is ContextSetting.RAG:
        if embedder is None:
            raise ConfigError("the rag context needs an embedder (--embedder)")
        return RagContext(embedder, rag_k)
    raise ConfigError("the memory context (agentic memory) is not implemented yet")


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
