"""Small synthetic datasets with known structure for the LRWorld builder tests.

``make_movie_dataset`` puts users in three taste groups over three item blocks, so association
rules and neighbours exist; ``GENRES`` are its seven genres.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from recworld.data.dataset import Dataset

GENRES = ["Action", "Comedy", "Drama", "Horror", "Romance", "Sci-Fi", "Thriller"]


def make_movie_dataset(
    n_users: int = 60, n_items: int = 80, seed: int = 0, *, full_fields: bool = True, name: str = "toy"
) -> Dataset:
    """Users in three taste groups over three item blocks, so rules and neighbours exist."""
    gen = np.random.default_rng(seed)
    rows = []
    for u in range(n_users):
        group = u % 3
        n = int(gen.integers(8, 20))
        block = np.arange(group * n_items // 3, (group + 1) * n_items // 3)
        own = gen.choice(block, size=min(n, len(block)), replace=False)
        other = gen.choice(n_items, size=3, replace=False)
        for t, item in enumerate([*own.tolist(), *other.tolist()]):
            rows.append({"user_id": f"u{u}", "item_id": f"i{item}", "timestamp": 1000 + 10 * t + u})
    inter = pd.DataFrame(rows).drop_duplicates(["user_id", "item_id"])
    items = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(n_items)],
            "title": [f"Movie {i}" for i in range(n_items)],
            "year": [1980 + i % 30 for i in range(n_items)],
            "genres": [sorted({GENRES[i % 7], GENRES[(i * 3) % 7]}) for i in range(n_items)],
        }
    )
    if full_fields:
        items["cast"] = [[f"Actor {(i + k) % 25}" for k in range(4)] for i in range(n_items)]
        items["director"] = [[f"Director {i % 12}"] for i in range(n_items)]
        items["logline"] = [f"A story number {i} about {GENRES[i % 7].lower()}." for i in range(n_items)]
        items["image_description"] = [f"A poster showing scene {i}." for i in range(n_items)]
    return Dataset.from_frames(name, "movie", inter, items)


def llara_file(folder: Path, n_seq: int = 30, n_artists: int = 60) -> Path:
    """A LastFM sequence file in LLaRA's format: histories, the next artist and 20 candidates each."""
    gen = np.random.default_rng(9)
    folder.mkdir(parents=True, exist_ok=True)
    genre = ["rock", "pop", "jazz", "metal", "folk"]

    def artist(i: int) -> dict[str, object]:
        return {"id": str(i), "name": f"Artist {i}", "genres": [genre[i % 5]]}

    with (folder / "llara_sequences.jsonl").open("w") as handle:
        for s in range(n_seq):
            seq = gen.choice(n_artists, size=int(gen.integers(3, 12)), replace=False).tolist()
            history, nxt = seq[:-1][-10:], seq[-1]
            others = [a for a in range(n_artists) if a not in seq]
            cands = [nxt, *gen.choice(others, size=19, replace=False).tolist()]
            row = {
                "seq_id": f"s{s}",
                "history": [artist(a) for a in history],
                "next": artist(nxt),
                "candidates": [artist(int(a)) for a in cands],
            }
            handle.write(json.dumps(row) + "\n")
    return folder
