"""Brute-force references that re-derive ground truth independently of the builders and the miner.

Dense float64 cosines and explicit pair counting: slow, obvious, and only for small test data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


def binary_matrix(interactions: pd.DataFrame) -> tuple[np.ndarray, list[str], list[str]]:
    """Dense users x items 0/1 matrix with ids sorted as strings."""
    users = sorted(interactions["user_id"].astype(str).unique())
    items = sorted(interactions["item_id"].astype(str).unique())
    u_index = {u: i for i, u in enumerate(users)}
    i_index = {it: j for j, it in enumerate(items)}
    dense = np.zeros((len(users), len(items)), dtype=np.float64)
    for u, it in zip(interactions["user_id"].astype(str), interactions["item_id"].astype(str), strict=True):
        dense[u_index[u], i_index[it]] = 1.0
    return dense, users, items


def dense_cosine(rows: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Exact float64 cosine between every row of ``rows`` and every row of ``keys``."""
    a = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-300)
    b = keys / np.maximum(np.linalg.norm(keys, axis=1, keepdims=True), 1e-300)
    return np.asarray(a @ b.T, dtype=np.float64)


def pair_rules(dense: np.ndarray) -> dict[tuple[int, int], tuple[float, float]]:
    """All pair rules (a -> c) with their (support, confidence), no thresholds."""
    n_users = dense.shape[0]
    co = dense.T @ dense
    counts = np.diag(co)
    out: dict[tuple[int, int], tuple[float, float]] = {}
    for a in range(dense.shape[1]):
        for c in range(dense.shape[1]):
            if a != c and co[a, c] > 0:
                out[(a, c)] = (co[a, c] / n_users, co[a, c] / counts[a])
    return out


def _absent(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, float) and np.isnan(value))


def item_text(row: Mapping[str, Any], domain: str, view: str | None) -> str | None:
    """What a next-item question shows for an item, written from docs/lrworld.md, not from the builder.

    ``view``: that field's text (None when the item has none). No view: a music
    artist is its name; a movie ``Title (Year), Genre|Genre``; a product
    ``Title, brand B, Leaf``.
    """
    if view is not None:
        return None if _absent(row.get(view)) else str(row[view])
    title = str(row["title"])
    if domain == "music":
        return title
    if not _absent(row.get("year")):
        title = f"{title} ({int(row['year'])})"
    if domain == "product":
        brand = [] if _absent(row.get("brand")) else [f"brand {row['brand']}"]
        path = row.get("categories")
        leaf = [] if path is None or not len(path) else [str(list(path)[-1])]
        return ", ".join([title, *brand, *leaf])
    genres = row.get("genres")
    return title if genres is None or not len(genres) else f"{title}, {'|'.join(str(g) for g in genres)}"
