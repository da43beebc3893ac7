"""Random data builders shared by the mining tests (a unique module name: tests/ has no packages)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def random_interactions(
    seed: int, n_users: int = 40, n_items: int = 25, density: float = 0.2
) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    mask = gen.random((n_users, n_items)) < density
    users, items = np.nonzero(mask)
    return pd.DataFrame({"user_id": [f"u{u}" for u in users], "item_id": [f"i{i}" for i in items]})
