"""Exact cosine top-k neighbours, computed in row blocks so memory stays bounded.

Rows are entities: item-item neighbours come from ``cosine_topk(m.matrix.T.tocsr(), k)``
and user-user neighbours from ``cosine_topk(m.matrix, k)``. A block of rows is
multiplied against all rows at once (one sparse or BLAS product), turned into a
dense score block, and cut down to k with ``argpartition``-style selection;
only the block ever lives in memory, never the full n x n similarity.

Ties are broken by index ascending, and every score is computed as
``dot / sqrt(sq_i * sq_j)`` in float64 so mathematically equal scores of binary
vectors (integer dots and squared norms) compare equal; this makes the ranking
reproducible and lets a brute-force reference match it exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from recworld.errors import ConfigError

# Dense float64 score block budget: rows per block = this / (8 * n_columns).
_BLOCK_BYTES = 128 * 2**20


@dataclass(frozen=True)
class Neighbours:
    """Top-k neighbours per row, sorted by score descending then index ascending.

    ``index`` is (n, k) int64 with -1 where fewer than k neighbours have a
    positive score; ``score`` is (n, k) float32 with NaN in those places.
    """

    index: np.ndarray
    score: np.ndarray

    def __len__(self) -> int:
        return int(self.index.shape[0])


def _rows_per_block(n_keys: int, block_bytes: int) -> int:
    return max(1, block_bytes // max(1, 8 * n_keys))


def _select_topk(scores: np.ndarray, k: int, floor: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Top-k entries above ``floor`` per row of a dense block, ties by column ascending.

    ``np.partition`` finds each row's k-th largest value; every entry at least
    that large (and above ``floor``) is a candidate, so ties at the cut are all kept
    and the exact (score desc, index asc) order decides who makes it.
    """
    n_rows, n_cols = scores.shape
    index = np.full((n_rows, k), -1, dtype=np.int64)
    value = np.full((n_rows, k), np.nan, dtype=np.float32)
    if n_rows == 0 or n_cols == 0:
        return index, value
    if n_cols > k:
        kth = -np.partition(-scores, k - 1, axis=1)[:, k - 1]
        mask = (scores >= kth[:, None]) & (scores > floor)
    else:
        mask = scores > floor
    rows, cols = np.nonzero(mask)
    vals = scores[rows, cols]
    order = np.lexsort((cols, -vals, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    starts = np.searchsorted(rows, np.arange(n_rows))
    rank = np.arange(len(rows)) - starts[rows]
    keep = rank < k
    index[rows[keep], rank[keep]] = cols[keep]
    value[rows[keep], rank[keep]] = vals[keep].astype(np.float32)
    return index, value


def _check_k(k: int) -> None:
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")


def _row_selection(rows: Sequence[int] | np.ndarray | None, n: int) -> np.ndarray:
    if rows is None:
        return np.arange(n, dtype=np.int64)
    selected = np.asarray(rows, dtype=np.int64).reshape(-1)
    if len(selected) and (selected.min() < 0 or selected.max() >= n):
        raise ConfigError(f"rows must index 0..{n - 1}")
    return selected


def cosine_topk(
    vectors: sp.csr_matrix,
    k: int,
    *,
    rows: Sequence[int] | np.ndarray | None = None,
    block_bytes: int = _BLOCK_BYTES,
) -> Neighbours:
    """Exact cosine top-k among the rows of a sparse (binary) matrix, self excluded.

    ``rows`` limits the queries to selected rows (the output has one row per
    selected row, in that order) while neighbours are still searched among all
    rows: a suite build needs neighbours of its sampled targets only.
    """
    _check_k(k)
    x = sp.csr_matrix(vectors, dtype=np.float64)
    n = x.shape[0]
    queries = _row_selection(rows, n)
    sq = np.asarray(x.multiply(x).sum(axis=1)).ravel()
    xt = sp.csr_matrix(x.T)  # CSR @ CSR keeps each block product in CSR
    index = np.empty((len(queries), k), dtype=np.int64)
    score = np.empty((len(queries), k), dtype=np.float32)
    step = _rows_per_block(n, block_bytes)
    for start in range(0, len(queries), step):
        block = queries[start : start + step]
        dots = (x[block] @ xt).toarray()
        denom = np.sqrt(sq[block][:, None] * sq[None, :])
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.where(dots > 0, dots / np.where(denom > 0, denom, 1.0), 0.0)
        scores[np.arange(len(block)), block] = -np.inf
        index[start : start + step], score[start : start + step] = _select_topk(scores, k)
    return Neighbours(index=index, score=score)


def dense_cosine_topk(
    queries: np.ndarray,
    keys: np.ndarray,
    k: int,
    *,
    exclude_self: bool = False,
    exclude: sp.csr_matrix | None = None,
    block_bytes: int = _BLOCK_BYTES,
    positive_only: bool = True,
) -> Neighbours:
    """Exact cosine top-k keys for each query embedding (positive scores only, unless told otherwise).

    Queries and keys are usually different entities (users vs items), so
    nothing is excluded unless ``exclude_self`` says query i is key i.
    ``exclude`` (queries x keys, sparse) removes the keys stored in row i from
    query i's candidates: a neural measure ranks the keys a target has not
    interacted with, and asking for "k unseen" directly keeps k small even
    when a popular item has been seen by most users (asking for "seen + k"
    would select and sort nearly every key). ``positive_only=False`` keeps
    negative cosines too (excluded keys never come back): in a trained space
    the nearest unseen key of a niche item may still point away from it.
    """
    _check_k(k)
    q = np.asarray(queries, dtype=np.float64)
    keys64 = np.asarray(keys, dtype=np.float64)
    if q.ndim != 2 or keys64.ndim != 2 or q.shape[1] != keys64.shape[1]:
        raise ConfigError(f"queries {q.shape} and keys {keys64.shape} must be 2-D with equal width")
    if exclude_self and q.shape[0] != keys64.shape[0]:
        raise ConfigError("exclude_self needs as many queries as keys")
    excluded = None
    if exclude is not None:
        excluded = sp.csr_matrix(exclude)
        if excluded.shape != (q.shape[0], keys64.shape[0]):
            raise ConfigError(f"exclude must be queries x keys {(q.shape[0], keys64.shape[0])}")
    sq_q = np.einsum("ij,ij->i", q, q)
    sq_k = np.einsum("ij,ij->i", keys64, keys64)
    index = np.empty((q.shape[0], k), dtype=np.int64)
    score = np.empty((q.shape[0], k), dtype=np.float32)
    step = _rows_per_block(keys64.shape[0], block_bytes)
    for start in range(0, q.shape[0], step):
        stop = min(start + step, q.shape[0])
        dots = q[start:stop] @ keys64.T
        denom = np.sqrt(sq_q[start:stop, None] * sq_k[None, :])
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.where(denom > 0, dots / np.where(denom > 0, denom, 1.0), 0.0)
        if exclude_self:
            local = np.arange(stop - start)
            scores[local, start + local] = -np.inf
        if excluded is not None:
            part = excluded[start:stop]
            scores[np.repeat(np.arange(stop - start), np.diff(part.indptr)), part.indices] = -np.inf
        index[start:stop], score[start:stop] = _select_topk(scores, k, 0.0 if positive_only else -np.inf)
    return Neighbours(index=index, score=score)
