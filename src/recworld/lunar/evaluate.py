"""Answering under each context setting, then judging: ``DIR/eval/<model>/<context>/``.

Each folder holds ``answers.jsonl`` (recworld.lunar.answer/1), ``judgments.jsonl``
(recworld.lunar.judgment/1) and ``run.json``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recworld.io import atomic_write_json, atomic_write_jsonl
from recworld.lunar import store
from recworld.lunar.contexts import ContextBuilder, UserData
from recworld.lunar.judge import Judge, JudgeItem
from recworld.lunar.llm import StructuredLLM, failures_json
from recworld.lunar.schemas import Query, Rubric

ASSISTANT_SYSTEM = (
    "You are the user's personal assistant. When user context is given, use it where it helps the request; "
    "do not recite it."
)


def answer_prompt(context: str, query: Query) -> str:
    if not context:
        return query.text
    return f"{context}\n\nUser request: {query.text}"


async def evaluate_setting(
    root: Path,
    builder: ContextBuilder,
    answer_llm: StructuredLLM,
    judge: Judge,
    *,
    model: str,
    judge_model: str,
    pairs: Sequence[tuple[Query, Rubric]],
    users: dict[str, UserData],
    seed: int = 0,
    max_tokens: int = 384,
) -> dict[str, Any]:
    setting = builder.setting.value
    llm = answer_llm.with_system(ASSISTANT_SYSTEM)
    prompts = [answer_prompt(builder.build(users[q.user_id], q, r), q) for q, r in pairs]
    answers = await asyncio.gather(
        *(
            llm.text(p, stage=f"answer-{setting}", key=q.query_id, max_tokens=max_tokens)
            for p, (q, _) in zip(prompts, pairs, strict=True)
        )
    )
    answered = [(q, r, a) for (q, r), a in zip(pairs, answers, strict=True) if a is not None]
    judgments = await judge.judge(
        [JudgeItem(q, r, a) for q, r, a in answered], seed=seed, tag=f"{store.slug(model)}/{setting}"
    )
    out = root / "eval" / store.slug(model) / setting
    atomic_write_jsonl(
        out / "answers.jsonl",
        [
            {
                "schema": "recworld.lunar.answer/1",
                "query_id": q.query_id,
                "model": model,
                "context": setting,
                "prompt_chars": len(p),
                "answer": a,
                "error": None if a is not None else "no answer",
            }
            for p, (q, _), a in zip(prompts, pairs, answers, strict=True)
        ],
    )
    atomic_write_jsonl(out / "judgments.jsonl", [j.to_json() for j in judgments])
    run = {
        "schema": "recworld.lunar.eval/1",
        "model": model,
        "judge": judge_model,
        "context": setting,
        "counts": {
            "queries": len(pairs),
            "answered": len(answered),
            "judged": sum(j.error is None for j in judgments),
        },
        "failures": [f for f in failures_json(answer_llm.failures) if f["stage"] == f"answer-{setting}"],
    }
    atomic_write_json(out / "run.json", run)
    return run
