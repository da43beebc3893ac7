"""Shared builders for model tests (imported by the test modules of this folder)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from recworld.data.dataset import Dataset
from recworld.lrworld.schema import Entry, Question, Target

GENRES = ["Comedy", "Drama", "Horror", "Action", "Animation", "Thriller"]
LETTERS = "ABCDEFGHIJ"


def toy_dataset(seed: int = 0, n_users: int = 40, n_items: int = 30) -> Dataset:
    r = np.random.default_rng(seed)
    weights = np.linspace(3, 1, n_items)
    rows = []
    for u in range(n_users):
        size = int(r.integers(4, 14))
        for t, i in enumerate(r.choice(n_items, size=size, replace=False, p=weights / weights.sum())):
            rows.append((f"u{u}", f"i{i}", t))
    items = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(n_items)],
            "title": [f"Movie {i}" for i in range(n_items)],
            "genres": [[GENRES[i % 6], GENRES[(i // 6) % 6]] for i in range(n_items)],
        }
    )
    return Dataset.from_frames(
        "toy", "movie", pd.DataFrame(rows, columns=["user_id", "item_id", "timestamp"]), items
    )


def question(
    measure: str,
    target: Target,
    candidates: list[str],
    *,
    answer: int = 0,
    history: list[str] | None = None,
    evidence: dict[str, object] | None = None,
) -> Question:
    fmt = "hit@1" if len(candidates) == 10 else "mcq"
    return Question(
        id=f"toy/{measure}/{target.id}-{'-'.join(candidates)}",
        dataset="toy",
        domain="movie",
        measure=measure,
        scale="personalization",
        format=fmt,
        target=target,
        history=[Entry(id=h, text=h) for h in history or []],
        candidates=[Entry(id=c, text=c) for c in candidates],
        answer_index=answer,
        evidence=evidence or {},
        seed=0,
    )
