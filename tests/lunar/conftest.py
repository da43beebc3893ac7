"""Fixtures: real MovieLens-100K users as anchors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from recworld.data import Dataset

ML100K = Path("/tmp/pdl/recbole/dataset_example/ml-100k")


def _strip(name: str) -> str:
    return name.split(":", maxsplit=1)[0]


@pytest.fixture(scope="session")
def ml100k_small() -> Dataset:
    """Three real ML-100K users (all their ratings), read from the RecBole atomic files."""
    if not (ML100K / "ml-100k.inter").exists():
        pytest.skip("ML-100K raw files not present")
    inter = pd.read_csv(ML100K / "ml-100k.inter", sep="\t")
    inter.columns = [_strip(c) for c in inter.columns]
    inter = inter[inter["user_id"].isin([1, 2, 3])]
    items = pd.read_csv(ML100K / "ml-100k.item", sep="\t")
    items.columns = [_strip(c) for c in items.columns]
    items = items.rename(columns={"movie_title": "title", "release_year": "year", "class": "genres"})
    items["genres"] = items["genres"].fillna("").str.split(" ")
    items = items[items["item_id"].isin(inter["item_id"])]
    users = pd.read_csv(ML100K / "ml-100k.user", sep="\t", dtype=str)
    users.columns = [_strip(c) for c in users.columns]
    return Dataset.from_frames("ml-100k", "movie", inter, items, users)
