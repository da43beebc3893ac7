from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from recworld.errors import ConfigError
from recworld.mining import InteractionMatrix, cosine_topk, dense_cosine_topk


def _reference(
    queries: np.ndarray, keys: np.ndarray, k: int, self_rows: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Dense cosine, then a python sort by (score desc, index asc) over positive scores."""
    q = queries.astype(np.float64)
    kk = keys.astype(np.float64)
    index = np.full((len(q), k), -1, dtype=np.int64)
    score = np.full((len(q), k), np.nan, dtype=np.float32)
    for r in range(len(q)):
        found = []
        for j in range(len(kk)):
            if self_rows is not None and j == self_rows[r]:
                continue
            denom = np.sqrt(np.dot(q[r], q[r]) * np.dot(kk[j], kk[j]))
            value = np.dot(q[r], kk[j]) / denom if denom > 0 else 0.0
            if value > 0:
                found.append((-value, j))
        for rank, (neg, j) in enumerate(sorted(found)[:k]):
            index[r, rank] = j
            score[r, rank] = -neg
    return index, score


@pytest.mark.parametrize("k", [1, 3, 10, 60])
@pytest.mark.parametrize("orientation", ["items", "users"])
def test_cosine_topk_matches_dense_reference(
    small_matrix: InteractionMatrix, k: int, orientation: str
) -> None:
    vectors = small_matrix.matrix.T.tocsr() if orientation == "items" else small_matrix.matrix
    dense = vectors.toarray()
    expected_index, expected_score = _reference(dense, dense, k, np.arange(len(dense)))
    # A tiny block budget forces many blocks, so block edges are exercised.
    got = cosine_topk(vectors, k, block_bytes=8 * dense.shape[0] * 3)
    np.testing.assert_array_equal(got.index, expected_index)
    np.testing.assert_array_equal(got.score, expected_score)
    assert got.index.dtype == np.int64 and got.score.dtype == np.float32


def test_ties_break_by_index_and_zero_rows_get_padding() -> None:
    # Rows 1, 2, 3 are identical to row 0's single item; row 4 is empty.
    dense = np.array([[1, 0], [1, 0], [1, 0], [1, 0], [0, 0], [0, 1]], dtype=np.float32)
    got = cosine_topk(sp.csr_matrix(dense), 2)
    np.testing.assert_array_equal(got.index[0], [1, 2])
    np.testing.assert_array_equal(got.index[3], [0, 1])
    np.testing.assert_array_equal(got.index[4], [-1, -1])
    assert np.isnan(got.score[4]).all()
    np.testing.assert_array_equal(got.index[5], [-1, -1])


def test_selected_rows_equal_full_rows(small_matrix: InteractionMatrix) -> None:
    vectors = small_matrix.matrix
    full = cosine_topk(vectors, 5)
    rows = np.array([7, 0, 3, 7])
    part = cosine_topk(vectors, 5, rows=rows)
    np.testing.assert_array_equal(part.index, full.index[rows])
    np.testing.assert_array_equal(part.score, full.score[rows])
    with pytest.raises(ConfigError):
        cosine_topk(vectors, 5, rows=[vectors.shape[0]])
    with pytest.raises(ConfigError):
        cosine_topk(vectors, 0)


@pytest.mark.parametrize("k", [1, 4, 30])
def test_dense_cosine_topk_matches_reference(k: int) -> None:
    gen = np.random.default_rng(3)
    # Small integers make exact ties (and negative scores, which are dropped) common.
    queries = gen.integers(-2, 3, size=(17, 4)).astype(np.float32)
    keys = gen.integers(-2, 3, size=(23, 4)).astype(np.float32)
    expected_index, expected_score = _reference(queries, keys, k, None)
    got = dense_cosine_topk(queries, keys, k, block_bytes=8 * 23 * 5)
    np.testing.assert_array_equal(got.index, expected_index)
    np.testing.assert_array_equal(got.score, expected_score)


def test_dense_cosine_topk_exclude_self() -> None:
    gen = np.random.default_rng(4)
    emb = gen.normal(size=(12, 3))
    expected_index, _ = _reference(emb, emb, 3, np.arange(12))
    got = dense_cosine_topk(emb, emb, 3, exclude_self=True)
    np.testing.assert_array_equal(got.index, expected_index)
    with pytest.raises(ConfigError):
        dense_cosine_topk(emb, emb[:5], 3, exclude_self=True)
    with pytest.raises(ConfigError):
        dense_cosine_topk(emb, emb[:, :2], 3)


@pytest.mark.parametrize("k", [1, 4, 30])
def test_dense_cosine_topk_exclude_matches_reference(k: int) -> None:
    gen = np.random.default_rng(5)
    queries = gen.integers(-2, 3, size=(17, 4)).astype(np.float32)
    keys = gen.integers(-2, 3, size=(23, 4)).astype(np.float32)
    mask = gen.random((17, 23)) < 0.4
    got = dense_cosine_topk(queries, keys, k, exclude=sp.csr_matrix(mask), block_bytes=8 * 23 * 5)
    for r in range(17):
        allowed = np.flatnonzero(~mask[r])
        ref_index, ref_score = _reference(queries[r : r + 1], keys[allowed], k, None)
        expected = np.where(ref_index[0] >= 0, allowed[np.maximum(ref_index[0], 0)], -1)
        np.testing.assert_array_equal(got.index[r], expected)
        np.testing.assert_array_equal(got.score[r], ref_score[0])
    with pytest.raises(ConfigError):
        dense_cosine_topk(queries, keys, k, exclude=sp.csr_matrix(mask[:, :5]))
