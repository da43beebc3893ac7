"""The binary user x item matrix every miner reads.

Ground truth in LRWorld is defined on *who touched what*, not on ratings: a
user's history is a transaction (association rules) and a one-hot vector
(memory-based cosine). So the matrix is binary and a user who rated the same
item twice counts once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from recworld.errors import DataError

_REQUIRED = ("user_id", "item_id")


def _codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes and the sorted unique string ids they index.

    Factorising the raw column first and turning only the uniques into strings
    avoids converting (and sorting) 25M values; ``np.unique`` on the uniques
    then orders them as strings and merges raw values that print alike (1 and "1").
    """
    raw_codes, uniques = pd.factorize(values)
    as_text = np.asarray([str(v) for v in uniques], dtype=str)
    ids, remap = np.unique(as_text, return_inverse=True)
    return remap.astype(np.int64)[raw_codes], ids


@dataclass(frozen=True)
class InteractionMatrix:
    """Binary users x items CSR matrix (float32) with the string ids of its rows and columns.

    Rows follow ``user_ids`` and columns follow ``item_ids``, both sorted
    ascending as strings, so the same interactions always give the same matrix.
    """

    matrix: sp.csr_matrix
    user_ids: np.ndarray
    item_ids: np.ndarray

    @classmethod
    def from_interactions(cls, interactions: pd.DataFrame) -> InteractionMatrix:
        """Build the matrix from a frame with ``user_id`` and ``item_id`` columns.

        Other columns (rating, timestamp) are ignored; duplicate pairs count once.
        """
        for column in _REQUIRED:
            if column not in interactions.columns:
                raise DataError(f"interactions lack the column {column!r}", field=column)
        if len(interactions) == 0:
            raise DataError("interactions are empty: nothing to mine", field="user_id")
        for column in _REQUIRED:
            if interactions[column].isna().any():
                raise DataError("interactions hold a missing id", field=column)
        rows, user_ids = _codes(interactions["user_id"])
        cols, item_ids = _codes(interactions["item_id"])
        n_users, n_items = len(user_ids), len(item_ids)
        # One int64 key per pair, sorted: that is (row, col) order, exactly CSR's,
        # and equal neighbours are the duplicates. A plain sort beats np.unique,
        # whose hash path is several times slower on 25M keys.
        keys = np.sort(rows * n_items + cols)
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        row_of = keys // n_items
        indices = (keys - row_of * n_items).astype(np.int32)
        indptr = np.zeros(n_users + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_of, minlength=n_users), out=indptr[1:])
        data = np.ones(len(keys), dtype=np.float32)
        matrix = sp.csr_matrix((data, indices, indptr), shape=(n_users, n_items))
        return cls(matrix=matrix, user_ids=user_ids, item_ids=item_ids)

    @property
    def n_users(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.matrix.shape[1])

    def user_index(self) -> dict[str, int]:
        """Map a user id to its row."""
        return {str(u): i for i, u in enumerate(self.user_ids)}

    def item_index(self) -> dict[str, int]:
        """Map an item id to its column."""
        return {str(v): i for i, v in enumerate(self.item_ids)}
