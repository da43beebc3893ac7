"""Agentic memory context: atomic facts distilled from the log, stored in Qdrant, top-k by query.

The paper runs Mem0 in vector-only mode: an LLM distils batches of 10 records into
atomic facts, the facts are embedded into Qdrant, and the top 50 facts are
retrieved for each query. Mem0's ``Memory.add`` calls the LLM through its own
provider clients, so its calls would bypass our Runner (no response cache, no
retries or failure accounting, no resume) and it sends telemetry by default.
This module is the same vector-only memory written on ``qdrant-client`` directly:

* distillation goes through :class:`~recworld.lunar.llm.StructuredLLM` (one call
  per batch of 10 records, key ``<user>/b<batch>``), so the Runner's cache makes a
  rerun send nothing and a failed batch is a counted failure, not a silent gap; the
  judge distils unless ``MemoryOptions.distiller`` names another model (a spec, or a
  Model object from Python);
* facts are embedded with the run's embedder (:mod:`recworld.lunar.llm.embed`, cached)
  and upserted with ids derived from their text, so reindexing is idempotent;
* Qdrant is embedded (``QdrantClient(path=DIR/memory/qdrant)``) unless a server URL
  is given; one collection per (distiller, embedder, batch size), filtered by user.

The distilled facts are also written to ``DIR/memory/<collection>/facts.jsonl``.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from recworld.console.options import Flag
from recworld.errors import ConfigError, require
from recworld.io import atomic_write_jsonl
from recworld.lunar.contexts.base import ContextEnv, ContextSetting, Coverage, Preparation, Sessions
from recworld.lunar.llm import StructuredLLM, gather_or_cancel
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.llm.embed import Embedder
from recworld.lunar.llm.plan import PlannedStage, planned
from recworld.lunar.llm.session import open_llm
from recworld.lunar.schemas import BehaviourRecord, EvalInputs, Query, Rubric, UserData
from recworld.records import Draft, FrozenRecord, Record

BATCH_SIZE = 10
TOP_K = 50


class FactsDraft(Draft):
    facts: list[str] = Field(min_length=1, max_length=10)


class MemoryFact(Record):
    """One distilled fact: a line of ``facts.jsonl`` and the payload of one Qdrant point."""

    schema_id: Literal["recworld.lunar.memory_fact/1"] = Field(
        default="recworld.lunar.memory_fact/1", alias="schema"
    )
    fact_id: str
    user_id: str
    batch: int
    text: str
    record_ids: list[str]


class MemoryOptions(FrozenRecord):
    k: Annotated[
        int, Field(ge=1, description="Facts retrieved for the memory context."), Flag("--memory-k")
    ] = TOP_K
    qdrant_url: Annotated[
        str | None,
        Field(description="Qdrant server for memory."),
        Flag("--qdrant-url", default_help="embedded in ROOT"),
    ] = None
    # The model that distils the facts; None: the judge (what the paper's Mem0 setup used an LLM for).
    # A spec or, from Python, a Model object; not a command-line option.
    distiller: Annotated[SessionConfig | None, Flag(cli=False)] = None


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


class MemoryContext(ContextSetting[MemoryOptions]):
    """The ``memory`` setting: :meth:`prepare` distils and indexes once, :meth:`build` retrieves."""

    name = "memory"
    summary = "atomic facts distilled from batches of 10 records, in Qdrant; the top-k by the request"
    order = 4
    default = False
    needs_embedder = True
    options_type = MemoryOptions

    def __init__(self, options: MemoryOptions, *, size: int = BATCH_SIZE) -> None:
        super().__init__(options)
        self.size = size
        self._store: FactStore | None = None

    def _distiller(self, sessions: Sessions) -> SessionConfig:
        return self.options.distiller or sessions.judge

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        """One request per batch of ``size`` records per user; the prompts come from the records alone."""
        prompts = [
            distil_prompt(b)
            for u in sorted(inputs.users)
            for b in batches(inputs.users[u].records, self.size)
        ]
        distiller = self._distiller(sessions)
        return {"memory": planned(distiller.name, len(prompts), distiller.max_tokens, prompts, exact=True)}

    async def prepare(self, env: ContextEnv) -> Preparation:
        """Distil every user's log (cached by the Runner) and index the facts; what it asked."""
        if env.embedder is None:
            raise ConfigError("the memory context needs an embedder (--embedder)")
        distiller = self._distiller(env.sessions)
        async with self._distilling(env) as llm:
            before = (len(llm.failures), llm.calls)
            name = collection_name(distiller.name, env.embedder.identity, self.size)
            users = env.inputs.users
            results = await gather_or_cancel(
                [distil_user(llm, users[u], size=self.size) for u in sorted(users)]
            )
            failures = tuple(llm.failures[before[0] :])
            calls = llm.calls - before[1]
        facts = [f for found, _ in results for f in found]
        atomic_write_jsonl(env.root / "memory" / name / "facts.jsonl", [f.to_json() for f in facts])
        if self._store is None:
            url = self.options.qdrant_url
            path = None if url else env.root / "memory" / "qdrant"
            self._store = FactStore(env.embedder, name, path=path, url=url)
        self._store.index(facts)
        return Preparation(asked=sum(asked for _, asked in results), failures=failures, calls=calls)

    @asynccontextmanager
    async def _distilling(self, env: ContextEnv) -> AsyncIterator[StructuredLLM]:
        """The judge's LLM, or the distiller's own session (cached in the same run folder)."""
        if self.options.distiller is None:
            yield env.judge_llm
            return
        async with open_llm(self.options.distiller, env.root) as llm:
            yield llm

    def retrieve(self, user_id: str, text: str) -> list[MemoryFact]:
        if self._store is None:
            raise RuntimeError("MemoryContext.prepare must run before build")
        return self._store.search(user_id, text, self.options.k)

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        facts = self.retrieve(user.profile.user_id, query.text)
        return "Remembered facts about the user:\n" + "\n".join(f"- {f.text}" for f in facts) if facts else ""

    def coverage(self, query_id: str) -> Coverage | None:
        return None

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
