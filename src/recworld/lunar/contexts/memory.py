"""Agentic memory as Mem0 runs it (vector-only): a memory model extracts facts and consolidates them.

For each user, the log is read in time order in batches of 10 records. Per batch:

1. **extract**: the memory model turns the batch into short facts about the user
   (:class:`FactsDraft`, key ``USER/bNNNN/extract``);
2. **retrieve**: for each new fact, the :data:`NEIGHBOURS` nearest memories the user
   already has are looked up in Qdrant (Mem0 looks up 5);
3. **decide**: the memory model sees those memories (under short ids ``m1``, ``m2``,
   ... as Mem0 shows them, so no one has to copy a UUID) and the new facts, and
   decides for each fact ADD, UPDATE (a shown memory, with the merged text), DELETE
   (a shown memory the fact contradicts) or NONE (:class:`DecisionsDraft`, key
   ``USER/bNNNN/decide``); the event and the ids are enums and the number of
   decisions is fixed in the decoding schema, so a grammar enforces them;
4. **apply**: the decisions change the user's memories in Qdrant, in order.

At answer time the top ``--memory-k`` (50) memories of the user by the query are shown.

Every model call goes through a :class:`~recworld.lunar.llm.StructuredLLM` on the
Runner (cache, retries, the failure policy): a batch whose extraction or decision
failed is a counted failure and changes nothing. The memory model is its own
session (``--memory-model``; the paper used Ling-2.6-1T), never the judge, and its
embedder is its own too (``--memory-embedder``; the paper used bge-m3), separate from
RAG's ``--embedder``. Qdrant is embedded at ``RUN/memory/qdrant`` unless
``--qdrant-url`` names a server.

The memory state depends on every earlier decision, so each eval rebuilds it from
empty: a rerun replays the cached calls (nothing is sent) and ends in the same state,
and memories of a re-synthesised folder never linger. What was built is written to
``RUN/memory/<collection>/``: ``events.jsonl`` (:class:`MemoryEvent`, every
decision), ``memories.jsonl`` (:class:`MemoryItem`, the final store) and
``memory_run.json`` (:class:`MemoryRun`: counts per event and how far the facts and
memories are from copies of the records, :class:`CopyDistance`).

**Why not Mem0 itself:** ``Memory.add`` calls the LLM and the embedder through its
own provider clients, so its calls would bypass our Runner (no response cache and
resume, no failure accounting, no ``--fail-on-error``), and it sends telemetry by
default. This module is Mem0's add/update/delete loop on ``qdrant-client``; the
prompts are ours.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field

from recworld.console.options import Flag
from recworld.io import atomic_write_jsonl
from recworld.lunar.contexts.base import ContextEnv, ContextSetting, Coverage, Preparation
from recworld.lunar.contexts.copies import CopyDistance, copy_distance
from recworld.lunar.contexts.memory_loop import (
    BATCH_SIZE,
    EVENTS,
    NEIGHBOURS,
    PROMPT_VERSION,
    TOP_K,
    MemoryItem,
    MemoryLoop,
    MemoryStore,
    UserLoop,
    batches,
    extract_prompt,
    record_text,
)
from recworld.lunar.contexts.roles import RoleSpec, Sessions
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
from recworld.lunar.llm.embed import identity_name, open_embedder_async
from recworld.lunar.llm.plan import PlannedStage, planned
from recworld.lunar.schemas import EvalInputs, Query, Rubric, UserData
from recworld.models import Embedder
from recworld.models.registry import ServerURL
from recworld.records import MAX_INT, FrozenRecord, Record, Settings

if TYPE_CHECKING:
    import numpy as np


class MemoryCounts(FrozenRecord):
    users: int
    batches: int
    batches_failed: int  # extraction or decision given up on: the batch changed nothing
    facts: int
    events: dict[str, int]  # ADD, UPDATE, DELETE, NONE
    skipped: int  # decisions on a memory an earlier decision of the batch deleted: stored as new memories
    memories: int  # left in the store at the end


class MemoryRun(Record):
    """``RUN/memory/<collection>/memory_run.json``: who managed the memory, what it did, how copy-like."""

    schema_id: Literal["recworld.lunar.memory_run/1"] = Field(
        default="recworld.lunar.memory_run/1", alias="schema"
    )
    collection: str
    memory_model: str
    embedder: str
    batch_size: int
    neighbours: int
    counts: MemoryCounts
    # How far from copies of the user's records (record lines without ids, local time):
    facts_distance: CopyDistance  # every extracted fact
    memories_distance: CopyDistance  # the final memories


class MemoryOptions(FrozenRecord, Settings):
    k: Annotated[
        int,
        Field(ge=1, le=MAX_INT, description="Memories retrieved for the memory context."),
        Flag("--memory-k"),
    ] = TOP_K
    qdrant_url: Annotated[
        ServerURL | None,
        Field(description="Qdrant server for memory."),
        Flag("--qdrant-url", default_help="embedded in ROOT"),
    ] = None


def collection_name(memory_model: str, embedder: str, size: int) -> str:
    """The memory setup's name: its folder under ``RUN/memory/`` and its embedded Qdrant collection."""
    key = f"{memory_model}\0{embedder}\0{size}\0{NEIGHBOURS}\0{PROMPT_VERSION}"
    return "memory_" + hashlib.sha256(key.encode()).hexdigest()[:16]


def server_collection(name: str, root: Path) -> str:
    """On a Qdrant server, which may hold several runs: the setup's name and the run folder's."""
    return f"{name}_{hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:12]}"


class MemoryContext(ContextSetting[MemoryOptions]):
    """The ``memory`` setting: :meth:`prepare` runs the memory loop once, :meth:`build` retrieves."""

    name = "memory"
    summary = "memories a memory model manages (extract, then ADD/UPDATE/DELETE/NONE), top-k by the request"
    order = 4
    default = False
    needs_embedder = False  # it opens its own (--memory-embedder), never RAG's
    options_type = MemoryOptions

    def __init__(self, options: MemoryOptions, *, size: int = BATCH_SIZE) -> None:
        super().__init__(options)
        self.size = size
        self._store: MemoryStore | None = None
        self._queries: dict[str, np.ndarray] = {}  # query text -> its vector (embedded in prepare)
        self.run_record: MemoryRun | None = None

    # Its two models, declared here only: the flags (--memory-model, --memory-base-url, ...,
    # --memory-embedder, --memory-embed-base-url, ...) are generated from these, and the
    # role names are their keys in LunarEvalConfig.roles (roles={"memory": ...}).
    roles: ClassVar[Mapping[str, RoleSpec]] = {
        "memory": RoleSpec(
            "--memory-model",
            "the model that manages the memory: extracts facts, decides ADD/UPDATE/DELETE/NONE "
            "(its own model, never the judge; the paper used Ling-2.6-1T)",
        ),
        "memory_embedder": RoleSpec(
            "--memory-embedder",
            "the embedder of the memory context, separate from --embedder (the paper used bge-m3)",
            kind="embedder",
            default=EmbedderConfig(),
        ),
    }

    old_keys: ClassVar[Mapping[str, str]] = {"memory_k": "k", "qdrant_url": "qdrant_url"}  # before eval/3

    @classmethod
    def read_old(cls, stored: dict[str, Any]) -> dict[str, Any]:
        """Also eval/3 before the memory loop: the distiller was a memory option, now the ``memory`` role."""
        options = dict(stored.get("options") or {})
        old = dict(options.get(cls.name) or {})
        if "distiller" in old:
            distiller = old.pop("distiller")
            stored["options"] = {**options, cls.name: old}
            roles = dict(stored.get("roles") or {})
            if distiller is not None and roles.get("memory") is None:
                stored["roles"] = {**roles, "memory": distiller}
        return super().read_old(stored)

    @classmethod
    def memory_model(cls, sessions: Sessions) -> SessionConfig:
        return cls.session(sessions, "memory")

    def plan(self, inputs: EvalInputs, sessions: Sessions) -> dict[str, PlannedStage]:
        """One extraction per batch (prompts from the records alone) and at most one decision per batch."""
        model = self.memory_model(sessions)
        prompts = [
            extract_prompt(b, inputs.users[u].zone)
            for u in sorted(inputs.users)
            for b in batches(inputs.users[u].records, self.size)
        ]
        return {
            "memory-extract": planned(model.name, len(prompts), model.max_tokens, prompts, exact=True),
            "memory-decide": planned(model.name, len(prompts), model.max_tokens, exact=False),
        }

    async def prepare(self, env: ContextEnv) -> Preparation:
        """Run the memory loop for every user (cached by the Runner), embed the requests; what it asked."""
        import numpy as np

        from recworld.lunar.llm.session import open_llm

        model = self.memory_model(env.sessions)
        config = self.role_embedder(env.sessions, "memory_embedder")
        async with open_embedder_async(config, env.root) as embed:  # an object stays the caller's
            embedder = embed.embedder
            name = collection_name(model.name, identity_name(embedder), self.size)
            if self._store is None:
                url = self.options.qdrant_url
                if url is None:
                    self._store = MemoryStore(name, path=env.root / "memory" / "qdrant", url=None)
                else:
                    self._store = MemoryStore(server_collection(name, env.root), path=None, url=url)
            self._store.reset()
            async with open_llm(model, env.root) as llm:
                users = await MemoryLoop(llm, embed, self._store, size=self.size).run(env.inputs.users)
                asked, failures, calls = llm.asked, tuple(llm.failures), llm.calls
            texts = sorted({q.text for q, _ in env.inputs.pairs})
            vectors = await embed.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)
            self._queries = dict(zip(texts, vectors, strict=True))
            self.run_record = self._write(env.root / "memory" / name, name, model, embedder, users)
        return Preparation(asked=asked, failures=failures, calls=calls)

    def _write(
        self, out: Path, name: str, model: SessionConfig, embedder: Embedder, users: Sequence[UserLoop]
    ) -> MemoryRun:
        events = [e for u in users for e in u.events]
        memories = [m for u in users for m in u.memories.values()]
        lines = {u.user.profile.user_id: [record_text(r, u.user.zone) for r in u.user.records] for u in users}
        values = {
            u.user.profile.user_id: [v for r in u.user.records for v in r.fields.values()] for u in users
        }
        counted = {e: sum(x.event == e for x in events) for e in EVENTS}
        run = MemoryRun(
            collection=name,
            memory_model=model.name,
            embedder=identity_name(embedder),
            batch_size=self.size,
            neighbours=NEIGHBOURS,
            counts=MemoryCounts(
                users=len(users),
                batches=sum(u.batches for u in users),
                batches_failed=sum(u.failed for u in users),
                facts=sum(len(u.facts) for u in users),
                events=counted,
                skipped=sum(u.skipped for u in users),
                memories=len(memories),
            ),
            facts_distance=copy_distance(
                [(u.user.profile.user_id, f) for u in users for f in u.facts], lines, values
            ),
            memories_distance=copy_distance([(m.user_id, m.text) for m in memories], lines, values),
        )
        atomic_write_jsonl(out / "events.jsonl", [e.to_json() for e in events])
        atomic_write_jsonl(out / "memories.jsonl", [m.to_json() for m in memories])
        run.write(out / "memory_run.json")
        return run

    def retrieve(self, user_id: str, text: str) -> list[MemoryItem]:
        if self._store is None:
            raise RuntimeError("MemoryContext.prepare must run before build")
        vector = self._queries.get(text)
        if vector is None:
            raise RuntimeError(f"the request {text[:60]!r} was not embedded in prepare")
        return self._store.search(user_id, vector, self.options.k)

    def build(self, user: UserData, query: Query, rubric: Rubric) -> str:
        found = self.retrieve(user.profile.user_id, query.text)
        return "Remembered facts about the user:\n" + "\n".join(f"- {m.text}" for m in found) if found else ""

    def coverage(self, query_id: str) -> Coverage | None:
        return None

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
