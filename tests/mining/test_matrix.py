from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recworld.errors import DataError
from recworld.mining import InteractionMatrix


def test_binary_sorted_ids_and_duplicates_count_once() -> None:
    frame = pd.DataFrame(
        {
            "user_id": ["b", "a", "b", "b", "10", "a"],
            "item_id": ["x", "y", "x", "z", "y", "y"],
            "rating": [5, 3, 1, 2, 4, 4],
        }
    )
    m = InteractionMatrix.from_interactions(frame)
    assert list(m.user_ids) == ["10", "a", "b"]
    assert list(m.item_ids) == ["x", "y", "z"]
    assert m.matrix.dtype == np.float32
    expected = np.array([[0, 1, 0], [0, 1, 0], [1, 0, 1]], dtype=np.float32)
    np.testing.assert_array_equal(m.matrix.toarray(), expected)
    assert m.matrix.nnz == 4
    assert m.user_index()["b"] == 2
    assert m.item_index()["z"] == 2


def test_matches_dense_reference_on_random_data() -> None:
    gen = np.random.default_rng(5)
    users = gen.integers(0, 30, size=500)
    items = gen.integers(0, 50, size=500)
    frame = pd.DataFrame({"user_id": users.astype(str), "item_id": items.astype(str)})
    m = InteractionMatrix.from_interactions(frame)
    u_index, i_index = m.user_index(), m.item_index()
    dense = np.zeros((len(m.user_ids), len(m.item_ids)), dtype=np.float32)
    for u, i in zip(users.astype(str), items.astype(str), strict=True):
        dense[u_index[u], i_index[i]] = 1.0
    np.testing.assert_array_equal(m.matrix.toarray(), dense)
    assert m.matrix.has_canonical_format


@pytest.mark.parametrize(
    ("frame", "field"),
    [
        (pd.DataFrame({"user_id": ["a"]}), "item_id"),
        (pd.DataFrame({"user_id": [], "item_id": []}), "user_id"),
        (pd.DataFrame({"user_id": ["a", None], "item_id": ["x", "y"]}), "user_id"),
    ],
)
def test_bad_input_names_the_field(frame: pd.DataFrame, field: str) -> None:
    with pytest.raises(DataError) as info:
        InteractionMatrix.from_interactions(frame)
    assert info.value.field == field
