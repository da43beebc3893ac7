"""The memory loop of the ``memory`` context: Mem0's extract / retrieve / decide / apply, per user.

:class:`MemoryLoop` reads each user's log in time order, in batches; per batch the memory
model extracts facts (:class:`FactsDraft`), the :data:`NEIGHBOURS` nearest stored memories
of each fact are looked up in :class:`MemoryStore` (Qdrant), and the memory model decides
ADD, UPDATE, DELETE or NONE per fact (:class:`DecisionsDraft`), applied in order by
:func:`~recworld.lunar.contexts.memory_apply.apply_batch` (which keeps the current state
after a DELETE and merges two UPDATEs of one memory). See
:mod:`recworld.lunar.contexts.memory` for the setting around it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from recworld.errors import require
from recworld.lunar.contexts.memory_apply import (
    EVENTS,
    NEW,
    Decision,
    Event,
    MemoryEvent,
    MemoryItem,
    apply_batch,
)
from recworld.lunar.llm import StructuredLLM, gather_or_cancel
from recworld.lunar.llm.decoding import room
from recworld.lunar.schemas import BehaviourRecord, UserData
from recworld.records import Draft

if TYPE_CHECKING:
    import numpy as np

    from recworld.runner import EmbeddingRunner

BATCH_SIZE = 10
TOP_K = 50
NEIGHBOURS = 5  # stored memories retrieved per new fact (Mem0's search limit when it adds)
MAX_FACTS = 10
PROMPT_VERSION = "mem0-loop/2"  # part of the collection name: a new prompt never reads old memories
__all__ = ["EVENTS", "NEW", "Decision", "Event", "MemoryEvent", "MemoryItem"]  # re-exported (memory_apply)


class FactsDraft(Draft):
    facts: list[str] = Field(min_length=1, max_length=MAX_FACTS, json_schema_extra=room(MAX_FACTS))


class DecisionsDraft(Draft):
    decisions: list[Decision] = Field(min_length=1, max_length=MAX_FACTS, json_schema_extra=room(MAX_FACTS))


def compact_facts(records: int) -> int:
    """Facts a batch of ``records`` gets under compact decoding: one per record, at most MAX_FACTS.

    Compact decoding fixes list lengths; a batch needs room for as many facts as it may
    change memories, so ADD, UPDATE and DELETE can all occur with a small local model.
    """
    return max(1, min(MAX_FACTS, records))


def batches(records: Sequence[BehaviourRecord], size: int = BATCH_SIZE) -> list[list[BehaviourRecord]]:
    """The user's records in time order, cut into consecutive batches of ``size``."""
    ordered = sorted(records, key=lambda r: (r.timestamp, r.record_id))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def record_text(record: BehaviourRecord, tz: tzinfo) -> str:
    """A record as the memory model reads it: local time, no record id (ids are not facts)."""
    return record.to_line(tz).split("] ", 1)[1]


def extract_prompt(batch: Sequence[BehaviourRecord], tz: tzinfo) -> str:
    lines = "\n".join(f"- {record_text(r, tz)}" for r in batch)
    return (
        "You keep the long-term memory of a personal assistant. From these behaviour records of one "
        "user, extract the facts worth remembering about the user: preferences and dislikes, habits and "
        "routines, regular places, services and people, plans, and changes in behaviour. Each fact is one "
        f"short sentence about the user that stands on its own. At most {MAX_FACTS} facts.\n\n"
        f"Records (the user's local time):\n{lines}\n\n"
        'JSON shape: {"facts": ["...", "..."]}'
    )


def decide_prompt(shown: Sequence[tuple[str, str]], facts: Sequence[str]) -> str:
    memories = "\n".join(f"- {sid}: {text}" for sid, text in shown) or "(none yet)"
    new = "\n".join(f"{i}. {f}" for i, f in enumerate(facts, 1))
    return (
        "You keep the long-term memory of a personal assistant. Compare new facts about the user with "
        "what is already remembered, and decide for each new fact, in order, one event:\n"
        '- ADD: it is new information; memory_id is "new" and text is the memory to store.\n'
        "- UPDATE: it refines, extends, corrects or supersedes a remembered memory (the user's state "
        "changed: a new diet, a cancelled membership); memory_id is that memory's id and text is the "
        "memory as it reads now.\n"
        "- DELETE: it shows a remembered memory was never or is no longer true and does not replace it; "
        "memory_id is that memory's id. The memory is removed and the new fact is stored.\n"
        "- NONE: it is already remembered or not worth keeping; nothing changes.\n\n"
        f"Remembered memories:\n{memories}\n\nNew facts:\n{new}\n\n"
        f"Give exactly {len(facts)} decisions. "
        'JSON shape: {"decisions": [{"event": "ADD", "memory_id": "new", "text": "..."}]}'
    )


class MemoryStore:
    """Users' memories in one Qdrant collection (embedded local path, or a server URL)."""

    def __init__(self, collection: str, *, path: Path | None, url: str | None) -> None:
        qdrant: Any = require(
            "qdrant_client", feature="the memory context", extra="memory", package="qdrant-client"
        )
        self._models: Any = qdrant.models
        if url is not None:
            self._client: Any = qdrant.QdrantClient(url=url)
        else:
            if path is None:
                raise ValueError("a MemoryStore needs a local path or a server url")
            path.mkdir(parents=True, exist_ok=True)
            self._client = qdrant.QdrantClient(path=str(path))
        self.collection = collection
        self._dim: int | None = None

    def reset(self) -> None:
        """Start from an empty collection (the memory is rebuilt by replaying the loop)."""
        if self._client.collection_exists(self.collection):
            self._client.delete_collection(self.collection)
        self._dim = None

    def _ensure(self, dim: int) -> None:
        if self._dim is None:
            m = self._models
            if not self._client.collection_exists(self.collection):
                params = m.VectorParams(size=dim, distance=m.Distance.COSINE)
                self._client.create_collection(self.collection, vectors_config=params)
            self._dim = dim

    def put(self, item: MemoryItem, vector: np.ndarray) -> None:
        self._ensure(len(vector))
        point = self._models.PointStruct(
            id=str(uuid.UUID(hex=item.memory_id)), vector=vector.tolist(), payload=item.to_json()
        )
        self._client.upsert(self.collection, points=[point], wait=True)

    def delete(self, item: MemoryItem) -> None:
        ids = [str(uuid.UUID(hex=item.memory_id))]
        self._client.delete(self.collection, points_selector=self._models.PointIdsList(points=ids), wait=True)

    def search(self, user_id: str, vector: np.ndarray, k: int) -> list[MemoryItem]:
        """The ``k`` memories of ``user_id`` nearest ``vector``, best first (ties by id, so reruns agree)."""
        if self._dim is None and not self._client.collection_exists(self.collection):
            return []
        m = self._models
        only = m.Filter(must=[m.FieldCondition(key="user_id", match=m.MatchValue(value=user_id))])
        hits = self._client.query_points(
            self.collection, query=vector.tolist(), query_filter=only, limit=k
        ).points
        ranked = sorted(hits, key=lambda h: (-round(float(h.score), 6), str(h.id)))
        return [MemoryItem.model_validate(h.payload) for h in ranked]

    def close(self) -> None:
        self._client.close()


@dataclass
class UserLoop:
    """One user's pass over the log: memories by id, and what was decided."""

    user: UserData
    memories: dict[str, MemoryItem] = field(default_factory=dict)
    events: list[MemoryEvent] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    batches: int = 0
    failed: int = 0
    skipped: int = 0


class MemoryLoop:
    """Mem0's add/update/delete loop over every user's log (see the module docstring)."""

    def __init__(
        self, llm: StructuredLLM, embed: EmbeddingRunner, store: MemoryStore, *, size: int = BATCH_SIZE
    ) -> None:
        self.llm = llm
        self.embed = embed
        self.store = store
        self.size = size

    async def run(self, users: Mapping[str, UserData]) -> list[UserLoop]:
        return await gather_or_cancel([self._user(users[u]) for u in sorted(users)])

    async def _user(self, user: UserData) -> UserLoop:
        state = UserLoop(user)
        for index, chunk in enumerate(batches(user.records, self.size)):
            state.batches += 1
            if not await self._batch(state, index, chunk):
                state.failed += 1
        return state

    async def _batch(self, state: UserLoop, index: int, chunk: Sequence[BehaviourRecord]) -> bool:
        uid = state.user.profile.user_id
        key = f"{uid}/b{index:04d}"
        extracted = await self.llm.structured(
            extract_prompt(chunk, state.user.zone),
            FactsDraft,
            stage="memory-extract",
            key=f"{key}/extract",
            lengths={"facts": compact_facts(len(chunk))} if self.llm.compact else None,
        )
        if extracted is None:
            return False
        facts = list(dict.fromkeys(f.strip() for f in extracted.facts if f.strip()))
        if not facts:
            return True
        state.facts += facts
        vectors = await self.embed.embed(facts)
        shown: dict[str, MemoryItem] = {}
        for vector in vectors:
            for item in self.store.search(uid, vector, NEIGHBOURS):
                shown.setdefault(item.memory_id, item)
        short = {f"m{i}": item for i, item in enumerate(shown.values(), 1)}
        decided = await self._decide(key, facts, short)
        if decided is None:
            return False
        steps = list(zip(facts, decided.decisions, strict=True))
        done = apply_batch(state.memories, uid, index, steps, short, [r.record_id for r in chunk])
        for item in done.deleted:
            self.store.delete(item)
        changed = list(done.changed.values())
        if changed:
            vectors = await self.embed.embed([m.text for m in changed])
            for item, vector in zip(changed, vectors, strict=True):
                self.store.put(item, vector)
        state.memories = done.memories
        state.events += done.events
        state.skipped += done.redirected
        return True

    async def _decide(
        self, key: str, facts: Sequence[str], short: Mapping[str, MemoryItem]
    ) -> DecisionsDraft | None:
        ids = list(short)
        events: list[str] = list(EVENTS) if ids else ["ADD", "NONE"]

        def check(draft: DecisionsDraft) -> str | None:
            if len(draft.decisions) != len(facts):
                return f"give exactly {len(facts)} decisions, one per new fact, in order"
            for i, d in enumerate(draft.decisions, 1):
                if d.event in ("UPDATE", "DELETE") and d.memory_id not in short:
                    shown = ", ".join(ids) or "none"
                    return f"decision {i}: {d.event} needs the id of a remembered memory ({shown})"
                if d.event == "UPDATE" and not d.text.strip():
                    return f"decision {i}: UPDATE needs the merged memory text"
            return None

        return await self.llm.structured(
            decide_prompt([(sid, m.text) for sid, m in short.items()], facts),
            DecisionsDraft,
            stage="memory-decide",
            key=f"{key}/decide",
            check=check,
            enums={"decisions.event": events, "decisions.memory_id": [NEW, *ids]},
            lengths={"decisions": len(facts)},
        )
