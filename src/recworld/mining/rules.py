"""Pair association rules {a} -> {c} over users' histories.

Each user's set of items is one transaction. Pair rules are this project's
reading of the paper, which names mlxtend's Apriori but no ``max_len``: with
``max_len=2`` only frequent single items and frequent pairs matter,
so Apriori reduces to: drop items below ``min_support`` (anti-monotonicity:
no pair containing them can be frequent), count pair co-occurrence on the
remaining columns with one matrix product, and keep pairs that clear both
thresholds. The results equal mlxtend's ``apriori(max_len=2)`` followed by
``association_rules(metric="confidence")``, but run in seconds on 25M
interactions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from recworld.errors import ConfigError
from recworld.mining.matrix import InteractionMatrix

# A dense BLAS multiply-add runs this many times faster than one step of
# scipy's single-threaded sparse product (measured on the 2-core dev box);
# it decides which of the two exact co-occurrence paths is cheaper.
_DENSE_SPEEDUP = 40.0
_DENSE_BLOCK_BYTES = 64 * 2**20


@dataclass(frozen=True)
class RuleTable:
    """Pair rules, sorted by antecedent, then the ranking metric descending, then consequent.

    The metric is confidence unless the miner was asked for ``order_by="lift"``.

    Indices are item columns of the :class:`InteractionMatrix` the rules came from.
    """

    antecedent: np.ndarray
    consequent: np.ndarray
    support: np.ndarray
    confidence: np.ndarray
    lift: np.ndarray

    def __len__(self) -> int:
        return len(self.antecedent)


def _check_fraction(name: str, value: float) -> None:
    if not 0.0 < value <= 1.0:
        raise ConfigError(f"{name} must be in (0, 1], got {value}")


_DENSE_MAX_COLS = 8192  # beyond this the dense F x F accumulator alone passes 512 MB


def _cooccurrence_sparse(x: sp.csr_matrix) -> sp.coo_matrix:
    counts = sp.coo_matrix(x.T.tocsr() @ x)
    return sp.coo_matrix(
        (np.rint(counts.data).astype(np.int64), (counts.row, counts.col)), shape=counts.shape
    )


def _cooccurrence_dense(x: sp.csr_matrix) -> sp.coo_matrix:
    """X^T X through BLAS on dense row blocks; float32 counts stay exact below 2^24 users."""
    n_users, n_cols = x.shape
    block = max(1, _DENSE_BLOCK_BYTES // max(1, 4 * n_cols))
    exact = n_users < 2**24
    dtype = np.float32 if exact else np.float64
    total = np.zeros((n_cols, n_cols), dtype=np.float64)
    for start in range(0, n_users, block):
        chunk = x[start : start + block].toarray().astype(dtype, copy=False)
        total += chunk.T @ chunk
    return sp.coo_matrix(np.rint(total).astype(np.int64))


def cooccurrence(x: sp.csr_matrix, *, method: str = "auto") -> sp.coo_matrix:
    """Exact pair counts ``X^T X`` of a binary matrix (int64 COO, zeros left out).

    ``method`` is ``"sparse"``, ``"dense"`` or ``"auto"``: the sparse product
    costs the sum of squared row lengths, the blocked dense product costs
    ``n_rows * n_cols^2`` much cheaper steps; ``auto`` takes the smaller.
    """
    x = sp.csr_matrix(x)
    if method == "auto":
        row_nnz = np.diff(x.indptr).astype(np.float64)
        sparse_cost = float(np.sum(row_nnz**2))
        dense_cost = float(x.shape[0]) * float(x.shape[1]) ** 2 / _DENSE_SPEEDUP
        cheaper_dense = dense_cost < sparse_cost and x.shape[1] <= _DENSE_MAX_COLS
        method = "dense" if cheaper_dense else "sparse"
    if method == "sparse":
        return _cooccurrence_sparse(x)
    if method == "dense":
        return _cooccurrence_dense(x)
    raise ConfigError(f"cooccurrence method must be 'auto', 'sparse' or 'dense', got {method!r}")


def mine_pair_rules(
    m: InteractionMatrix,
    min_support: float = 0.01,
    min_confidence: float = 0.01,
    *,
    method: str = "auto",
    order_by: str = "confidence",
) -> RuleTable:
    """All rules {a} -> {c} with support({a,c}) >= ``min_support`` and confidence >= ``min_confidence``.

    support = share of users holding both items; confidence = supp(a,c) / supp(a);
    lift = confidence / supp(c). Defaults are the paper's 0.01 / 0.01.
    Each antecedent's rules come best first by ``order_by`` ("confidence" or
    "lift"): lift discounts a consequent that is frequent anyway, so the top
    rule is not simply the most popular co-item.
    """
    if order_by not in ("confidence", "lift"):
        raise ConfigError(f"order_by must be 'confidence' or 'lift', got {order_by!r}")
    _check_fraction("min_support", min_support)
    _check_fraction("min_confidence", min_confidence)
    x = sp.csr_matrix(m.matrix, copy=False)
    n_users = x.shape[0]
    item_count = np.diff(x.tocsc().indptr).astype(np.int64)
    item_support = item_count / n_users
    frequent = np.flatnonzero(item_support >= min_support).astype(np.int64)
    if len(frequent) < 2:
        return _empty()
    xf = x[:, frequent]
    xf.data = np.ones_like(xf.data)
    pairs = cooccurrence(xf, method=method)
    support_all = pairs.data / n_users
    keep_pair = (pairs.row != pairs.col) & (pairs.data > 0) & (support_all >= min_support)
    a_local = pairs.row[keep_pair].astype(np.int64)
    c_local = pairs.col[keep_pair].astype(np.int64)
    support = support_all[keep_pair]
    supp_a = item_support[frequent[a_local]]
    supp_c = item_support[frequent[c_local]]
    confidence = support / supp_a
    keep = confidence >= min_confidence
    a_local, c_local = a_local[keep], c_local[keep]
    support, confidence, supp_c = support[keep], confidence[keep], supp_c[keep]
    antecedent = frequent[a_local]
    consequent = frequent[c_local]
    lift = confidence / supp_c
    order = np.lexsort((consequent, -(lift if order_by == "lift" else confidence), antecedent))
    return RuleTable(
        antecedent=antecedent[order],
        consequent=consequent[order],
        support=support[order].astype(np.float64),
        confidence=confidence[order].astype(np.float64),
        lift=lift[order].astype(np.float64),
    )


def _empty() -> RuleTable:
    ints = np.zeros(0, dtype=np.int64)
    floats = np.zeros(0, dtype=np.float64)
    return RuleTable(ints, ints.copy(), floats, floats.copy(), floats.copy())
