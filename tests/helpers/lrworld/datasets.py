"""Small synthetic datasets with known structure for the LRWorld builder tests.

``make_movie_dataset`` puts users in three taste groups over three item blocks, so association
rules and neighbours exist; ``GENRES`` are its seven genres.
"""

from __future__ import annotations

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
