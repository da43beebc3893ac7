"""How far the memory context's facts are from copies of the records, measured side by side.

The memory context used to distil with a prompt asking to keep "what, when, where, with
which merchant, title or amount"; its facts were near-copies of the record lines, which
hides the compression the paper blames for the RAG-memory gap. This bench asks one
memory model for facts about the same logs with the old prompt and with today's
extraction prompt (:func:`recworld.lunar.contexts.memory_loop.extract_prompt`), then runs
today's whole loop (extract, retrieve, ADD/UPDATE/DELETE/NONE, embedded Qdrant) and
prints :func:`recworld.lunar.contexts.copies.copy_distance` for each, next to a model
that copies the record lines (the ceiling, 1.0).

    python bench/bench_memory_copies.py --model llamacpp:/path/qwen2.5-0.5b-instruct.gguf --no-compact

The logs are built here (two users, a fortnight each, six domains, varied fields,
America/Chicago), so the numbers are about the prompts and the model, not a dataset.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Sequence
from datetime import tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

from recworld.chat import Request
from recworld.lunar.contexts import ContextEnv, Sessions
from recworld.lunar.contexts.copies import CopyDistance, copy_distance
from recworld.lunar.contexts.memory import MemoryContext, MemoryOptions
from recworld.lunar.contexts.memory_loop import FactsDraft, batches, extract_prompt, record_text
from recworld.lunar.llm.config import EmbedderConfig, SessionConfig
from recworld.lunar.llm.session import open_llm
from recworld.lunar.schemas import (
    Affinity,
    BehaviourRecord,
    BehaviourType,
    Category,
    Demographic,
    EvalInputs,
    EvidenceSet,
    Lifestyle,
    Profile,
    Query,
    Rubric,
    UserData,
)
from recworld.models.scripted import ScriptedModel

ZONE = ZoneInfo("America/Chicago")
START = 1709532000  # Monday 2024-03-04 00:00 in Chicago

# (domain, type, local hour, fields) rotated through a fortnight.
PATTERN: list[tuple[Category, BehaviourType, int, dict[str, str | float]]] = [
    (
        Category.DINING,
        BehaviourType.ORDER,
        12,
        {"merchant": "Pho Saigon", "dish": "beef pho", "amount": 14.5},
    ),
    (Category.FITNESS, BehaviourType.WORKOUT, 7, {"place": "Lakeshore Gym", "activity": "spin class"}),
    (Category.MOVIES, BehaviourType.WATCH, 21, {"title": "Dune Part Two", "where": "AMC River East"}),
    (Category.GROCERIES, BehaviourType.PURCHASE, 18, {"store": "Whole Foods", "items": "oat milk, kale"}),
    (Category.LOCAL_TRANSPORT, BehaviourType.RIDE, 8, {"from": "Logan Square", "to": "the Loop"}),
    (
        Category.DINING,
        BehaviourType.ORDER,
        20,
        {"merchant": "Lou Malnati's", "dish": "deep dish", "amount": 31.0},
    ),
    (Category.MUSIC, BehaviourType.LISTEN, 22, {"artist": "Phoebe Bridgers", "album": "Punisher"}),
    (Category.FITNESS, BehaviourType.WORKOUT, 19, {"place": "Lakefront Trail", "activity": "5 km run"}),
]
OLD_PROMPT = (
    "Distil these behaviour records of one user into short atomic facts worth remembering "
    "for a personal assistant. Each fact states one thing (what, when, where, with which "
    "merchant, title or amount) and stands on its own. At most 10 facts.\n\n"
    "Records:\n{lines}\n\n"
    'JSON shape: {{"facts": ["...", "..."]}}'
)


def user(uid: str, n: int, shift: int) -> UserData:
    records = []
    for i in range(n):
        domain, kind, hour, fields = PATTERN[(i + shift) % len(PATTERN)]
        day = (i * 13 // 10) % 14
        ts = START + day * 86400 + hour * 3600 + (i % 4) * 900
        records.append(
            BehaviourRecord(
                record_id=f"{uid}/r{i:03d}",
                user_id=uid,
                timestamp=ts,
                domain=domain,
                type=kind,
                fields=fields,
            )
        )
    profile = Profile(
        user_id=uid,
        demographic=Demographic(user_id=uid, age=31, occupation="nurse", timezone="America/Chicago"),
        affinities=[Affinity(category=Category.DINING, score=0.8, preferences=["noodles"])],
        lifestyle=Lifestyle(
            clothing="casual", food="varied", housing="flat", mobility="transit", spending="mid"
        ),
    )
    return UserData(profile, tuple(sorted(records, key=lambda r: r.timestamp)), ZONE)


def copier(request: Request) -> str:
    """The ceiling: every record line of the prompt, verbatim, as a fact."""
    lines = [x[2:] for x in request.messages[-1].content.splitlines() if x.startswith("- ")]
    return json.dumps({"facts": lines[:10] or ["none"]})


async def extract_all(
    session: SessionConfig, root: Path, users: Sequence[UserData], old: bool
) -> tuple[list[tuple[str, str]], int]:
    facts: list[tuple[str, str]] = []
    async with open_llm(session, root) as llm:
        for u in users:
            for i, chunk in enumerate(batches(u.records)):
                lines = "\n".join(f"- {record_text(r, u.zone)}" for r in chunk)
                prompt = OLD_PROMPT.format(lines=lines) if old else extract_prompt(chunk, u.zone)
                key = f"{u.profile.user_id}/b{i:04d}/{'old' if old else 'new'}"
                draft = await llm.structured(prompt, FactsDraft, stage="bench", key=key)
                facts += [(u.profile.user_id, f) for f in (draft.facts if draft else [])]
        return facts, len(llm.failures)


def lines_of(users: Sequence[UserData], zone: tzinfo) -> dict[str, list[str]]:
    return {u.profile.user_id: [record_text(r, zone) for r in u.records] for u in users}


def show(label: str, d: CopyDistance, extra: str = "") -> None:
    if d.token_overlap is None or d.char_similarity is None:
        print(f"{label:<34} n={d.n:<3} (no facts) {extra}")
        return
    t, c = d.token_overlap, d.char_similarity
    print(
        f"{label:<34} n={d.n:<3} token overlap mean {t.mean:.3f} median {t.median:.3f} max {t.max:.3f} | "
        f"char similarity mean {c.mean:.3f} max {c.max:.3f} | near-copies {d.near_copies:.1%} {extra}"
    )


async def loop(session: SessionConfig, root: Path, users: Sequence[UserData]) -> MemoryContext:
    """Today's whole memory loop, as ``lunar eval --context memory`` runs it (the answer/judge unused)."""
    q = Query(
        query_id="u0/q0",
        user_id="u0",
        text="Where should I eat?",
        domains=[Category.DINING],
        multi_domain=False,
    )
    r = Rubric(
        query_id="u0/q0", user_id="u0", generic_answer="g", decisions=[], evidence=EvidenceSet(), effects=[],
        facts=[], points=[],
    )  # fmt: skip
    unused = SessionConfig(model=ScriptedModel(lambda request: "", name="unused"))
    async with open_llm(unused, root) as idle:
        env = ContextEnv(
            root=root,
            inputs=EvalInputs(pairs=[(q, r)], users={u.profile.user_id: u for u in users}),
            sessions=Sessions(
                answer=unused,
                judge=unused,
                roles={"memory": session, "memory_embedder": EmbedderConfig(model="minilm")},
            ),
            answer_llm=idle,
            judge_llm=idle,
            answer_max_tokens=256,
            embedder=None,
        )
        memory = MemoryContext(MemoryOptions())
        await memory.prepare(env)
    return memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="memory model spec, e.g. llamacpp:/path/model.gguf")
    parser.add_argument("--compact", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--records", type=int, default=30, help="records per user (batches of 10)")
    parser.add_argument("--out", type=Path, default=None, help="run folder (default: a temporary one)")
    args = parser.parse_args()
    users = [user("u0", args.records, 0), user("u1", args.records, 3)]
    session = SessionConfig(model=args.model, compact=args.compact, max_attempts=3, max_tokens=400)
    root = args.out or Path(tempfile.mkdtemp(prefix="bench-memory-"))
    lines = lines_of(users, ZONE)
    ceiling, _ = asyncio.run(
        extract_all(SessionConfig(model=ScriptedModel(copier, name="copier")), root, users, False)
    )
    show("copier (ceiling)", copy_distance(ceiling, lines))
    for old in (True, False):
        started = time.perf_counter()
        facts, failed = asyncio.run(extract_all(session, root, users, old))
        took = f"[{failed} failed batches, {time.perf_counter() - started:.0f} s]"
        show(
            "old distil prompt: facts" if old else "extraction prompt: facts",
            copy_distance(facts, lines),
            took,
        )
    started = time.perf_counter()
    memory = asyncio.run(loop(session, root, users))
    run = memory.run_record
    memory.close()
    assert run is not None
    seconds = time.perf_counter() - started
    took = f"[{seconds:.0f} s; events {run.counts.events}, {run.counts.batches_failed} failed batches]"
    show("memory loop: extracted facts", run.facts_distance)
    show("memory loop: final memories", run.memories_distance, took)
    print(f"run folder: {root} (memory/{run.collection}/memory_run.json)")


if __name__ == "__main__":
    main()
