"""Small datasets that, between them, give every measure of the catalogue.

One per domain: movies with every field (cast, director, logline, poster
descriptions), an Amazon-like shop (brand, colour, a category path, image
descriptions), and LastFM-like music (artist names and genres). A measure that
needs a field none of them has makes ``test_every_measure_is_built_by_the_test_data``
fail, so a new measure cannot go unchecked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helpers.lrworld.datasets import make_movie_dataset
from recworld.data.dataset import Dataset
from recworld.domain import Domain


def product_dataset() -> Dataset:
    gen = np.random.default_rng(3)
    n_items = 60
    roots = ["Home", "Toys", "Garden", "Books", "Sports"]
    paths = [[roots[i % 5], f"{roots[i % 5]} {i % 4}", f"Leaf {i % 9}"] for i in range(n_items)]
    items = pd.DataFrame(
        {
            "item_id": [f"p{i}" for i in range(n_items)],
            "title": [f"Thing {i}" for i in range(n_items)],
            "brand": [f"Brand {i % 11}" for i in range(n_items)],
            "color": [["red", "blue", "green", "black", "white"][i % 5] for i in range(n_items)],
            "categories": paths,
            # Every fourth product has no image description: mm_image must skip it everywhere.
            "image_description": [None if i % 4 == 3 else f"A photo of product {i}." for i in range(n_items)],
        }
    )
    rows = [
        {"user_id": f"c{u}", "item_id": f"p{int(i)}", "timestamp": t}
        for u in range(40)
        for t, i in enumerate(gen.choice(n_items, size=int(gen.integers(7, 15)), replace=False))
    ]
    return Dataset.from_frames("shop", "product", pd.DataFrame(rows), items)


def music_dataset() -> Dataset:
    """Artists with names and genres; histories long enough for LLaRA's ten-artist windows."""
    base = make_movie_dataset(n_users=30, n_items=40, full_fields=False)
    return Dataset.from_frames("fm", "music", base.interactions, base.items.drop(columns=["year"]))


def dataset_for(domain: Domain) -> Dataset:
    if domain is Domain.MOVIE:
        return make_movie_dataset()
    if domain is Domain.PRODUCT:
        return product_dataset()
    return music_dataset()
