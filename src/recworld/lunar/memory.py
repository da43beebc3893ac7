"""Agentic memory context: atomic facts distilled from the log, stored in Qdrant, top-k by query.

The paper runs Mem0 in vector-only mode: an LLM distils batches of 10 records into
atomic facts, the facts are embedded into Qdrant, and the top 50 facts are
retrieved for each query. Mem0's ``Memory.add`` calls the LLM through its own
provider clients, so its calls would bypass our Runner (no response cache, no
retries or failure accounting, no resume) and it sends telemetry by default.
This module is the same vector-only memory written on ``qdrant-client`` directly:

* distillation goes through :class:`~recworld.lunar.llm.StructuredLLM` (one call
  per batch of 10 records, key ``<user>/b<batch>``), so the Runner's cache makes a
  rerun send nothing and a failed batch is a counted failure, not a silent gap;
* facts are embedded with the run's embedder (:mod:`recworld.lunar.embed`, cached)
  and upserted with ids derived from their text, so reindexing is idempotent;
* Qdrant is embedded (``QdrantClient(path=DIR/memory/qdrant)``) unless a server URL
  is given; one collection per (distiller, embedder, batch size), filtered by user.

The distilled facts are also written to ``DIR/memory/<collection>/facts.jsonl``.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from recworld.errors import require
from recworld.io import atomic_write_jsonl
from recworld.lunar.contexts import ContextSetting, UserData
from recworld.lunar.embed import Embedder
from recworld.lunar.llm import StructuredLLM, gather_or_cancel
from recworld.lunar.schemas import BehaviourRecord, Query, Rubric, _Strict

BATCH_SIZE = 10
TOP_K = 50


class FactsDraft(BaseModel):
    model_config = ConfigDict(extra="forbid")
    facts: list[str] = Field(min_length=1, max_length=10)


class MemoryFact(_Strict):
    """One distilled fact: a line of ``facts.jsonl`` and the payload of one Qdrant point."""

    schema_: Literal["recworld.lunar.memory_fact/1"] = Field(
        default="recworld.lunar.memory_fact/1", alias="schema"
    )
    fact_id: str
    user_id: str
    batch: int
    text: str
    record_ids: list[str]


def batches(records: Sequence[BehaviourRecord], size: int = BATCH_SIZE) -> list[list[BehaviourRecord]]:
    """The user's records in time order, cut into consecutive batches of ``size``."""
    ordered = sorted(records, key=lambda r: (r.timestamp, r.record_id))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def distil_prompt(batch: Sequence[BehaviourRecord]) -> str:
    lines = "\n".join(r.to_line() for r in batch)
    return (
        "Distil these behaviour records of one user into short atomic facts worth remembering "
        "for a personal assistant. Each fact states one thing (what, when, where, with which "
        "merchant, title or amount) and stands on its own. At most 10 facts.\n\n"
        f"Records:\n{lines}\n\n"
        'JSON shape: {"facts": ["...", "..."]}'
    )


def fact_id(user_id: str, batch: int, text: str) -> str:
    return hashlib.sha256(f"{user_id}\0{batch}\0{text}".encode()).hexdigest()[:24]


async def distil_user(
    llm: StructuredLLM, user: UserData, *, size: int = BATCH_SIZE
) -> tuple[list[MemoryFact], int]:
    """Facts for one user and the number of batches asked (a failed batch adds no facts)."""
    uid = user.profile.user_id
    chunks = batches(user.records, size)
    drafts = await gather_or_cancel(
        [
            llm.structured(distil_prompt(b), FactsDraft, stage="memory", key=f"{uid}/b{i:04d}")
            for i, b in enumerate(chunks)
        ]
    )
    facts = []
    for i, (chunk, draft) in enumerate(zip(chunks, drafts, strict=True)):
        for text in dict.fromkeys(t.strip() for t in (draft.facts if draft else []) if t.strip()):
            ids = [r.record_id for r in chunk]
            facts.append(
                MemoryFact(fact_id=fact_id(uid, i, text), user_id=uid, batch=i, text=text, record_ids=ids)
            )
    return facts, len(chunks)


class FactStore:
    """Facts in one Qdrant collection (embedded local path, or a server URL)."""

    def __init__(self, embedder: Embedder, collection: str, *, path: Path | None, url: str | None) -> None:
        qdrant: Any = require(
            "qdrant_client", feature="the memory context", extra="memory", package="qdrant-client"
        )
        self._models: Any = qdrant.models
        if url is not None:
            self._client: Any = qdrant.QdrantClient(url=url)
        else:
            if path is None:
                raise ValueError("a FactStore needs a local path or a server url")
            path.mkdir(parents=True, exist_ok=True)
            self._client = qdrant.QdrantClient(path=str(path))
        self.embedder = embedder
        self.collection = collection

    def index(self, facts: Sequence[MemoryFact]) -> None:
        if not facts:
            return
        vectors = self.embedder.embed([f.text for f in facts])
        m = self._models
        if not self._client.collection_exists(self.collection):
            params = m.VectorParams(size=int(vectors.shape[1]), distance=m.Distance.COSINE)
            self._client.create_collection(self.collection, vectors_config=params)
        points = [
            m.PointStruct(
                id=str(uuid.UUID(hex=f.fact_id.ljust(32, "0"))), vector=v.tolist(), payload=f.to_json()
            )
            for f, v in zip(facts, vectors, strict=True)
        ]
        self._client.upsert(self.collection, points=points)

    def search(self, user_id: str, text: str, k: int) -> list[MemoryFact]:
        """The ``k`` facts of ``user_id`` closest to ``text``, best first."""
        if not self._client.collection_exists(self.collection):
            return []
        m = self._models
        vector = self.embedder.embed([text])[0].tolist()
        only = m.Filter(must=[m.FieldCondition(key="user_id", match=m.MatchValue(value=user_id))])
        hits = self._client.query_points(self.collection, query=vector, query_filter=only, limit=k).points
        return [MemoryFact.model_validate(h.payload) for h in hits]

    def close(self) -> None:
        self._client.close()


def collection_name(distiller: str, embedder: str, size: int) -> str:
    return "facts_" + hashlib.sha256(f"{distiller}\0{embedder}\0{size}".encode()).hexdigest()[:16]


class MemoryContext:
    """The ``memory`` setting: :meth:`prepare` distils and indexes once, :meth:`build` retrieves."""

    setting = ContextSetting.MEMORY

    def __init__(
        self,
        embedder: Embedder,
        root: Path,
        *,
        url: str | None = None,
        k: int = TOP_K,
        size: int = BATCH_SIZE,
    ) -> None:
        self.embedder, self.root, self.url, self.k, self.size = embedder, root, url, k, size
        self._store: FactStore | None = None

    async def prepare(self, users: Mapping[str, UserData], llm: StructuredLLM, distiller: str) -> int:
        """Distil every user's log (cached by the Runner) and index the facts; returns the batches asked."""
        name = collection_name(distiller, self.embedder.identity, self.size)
        results = await gather_or_cancel([distil_user(llm, users[u], size=self.size) for u in sorted(users)])
        facts = [f for found, _ in results for f in found]
        atomic_write_jsonl(self.root / "memory" / name / "facts.jsonl", [f.to_json() for f in facts])
        if self._store is None:
            path = None if self.url else self.root / "memory" / "qdrant"
            self._store = FactStore(self.embedder, name, path=path, url=self.url)
        self._store.index(facts)
        return sum(asked for _, asked in results)

    def retrieve(self, user_id: str, text: str) -> list[MemoryFact]:
        if self._store is None:
            raise RuntimeError("MemoryContext.prepare must run before build")
        return self._store.search(user_id, text, self.k)

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        facts = self.retrieve(user.profile.user_id, query.text)
        return "Remembered facts about the user:\n" + "\n".join(f"- {f.text}" for f in facts) if facts else ""

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
