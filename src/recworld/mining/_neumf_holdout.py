"""NeuMF's leave-one-out checks: two held-out items per sampled user, one to stop on, one to report.

NCF's protocol (He et al., 2017): each held-out item is ranked against
``eval_candidates - 1`` sampled items the user never had, and HR@10 is the
share of users whose item lands in the top 10. Training stops on the
*validation* item; the figure reported and compared with popularity comes
from the *test* item, which early stopping never looked at, so it is not
inflated by the choice of epoch. The matrix has no timestamps, so the held-out
items are random rather than the latest (docs/mining.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from recworld.seeding import rng

if TYPE_CHECKING:
    import torch

HIT_AT = 10


@dataclass(frozen=True)
class Holdout:
    """Eval users, validation and test candidates (column 0: the held-out item), and the train matrix."""

    users: np.ndarray  # (e,) eval users
    valid: np.ndarray  # (e, c) item columns
    test: np.ndarray  # (e, c) item columns
    train: sp.csr_matrix


def _competitors(x: sp.csr_matrix, users: np.ndarray, n_neg: int, gen: np.random.Generator) -> np.ndarray:
    """``n_neg`` distinct items each user never had (held-out items included in "had")."""
    n_items = x.shape[1]
    out = np.empty((len(users), n_neg), dtype=np.int64)
    for row, user in enumerate(users.tolist()):
        seen = x.indices[x.indptr[user] : x.indptr[user + 1]]
        pool = gen.choice(n_items, size=min(n_items, 4 * n_neg + len(seen)), replace=False)
        out[row] = pool[~np.isin(pool, seen)][:n_neg]
    return out


def holdout_split(x: sp.csr_matrix, eval_users: int, eval_candidates: int, seed: int) -> Holdout:
    """Remove two random items of up to ``eval_users`` users; draw unseen competitors for each."""
    gen = rng(seed, "mining", "neumf", "holdout")
    n_items = x.shape[1]
    degree = np.diff(x.indptr)
    # Small catalogues get fewer competitors: at most half the items, so most users qualify.
    n_neg = min(eval_candidates - 1, n_items // 2)
    eligible = np.flatnonzero((degree >= 3) & (n_items - degree >= n_neg))
    n_eval = min(eval_users, len(eligible))
    if n_eval == 0 or n_neg < 1:
        empty = np.zeros((0, max(n_neg, 0) + 1), np.int64)
        return Holdout(np.zeros(0, np.int64), empty, empty, x)
    users = np.sort(gen.choice(eligible, size=n_eval, replace=False))
    deg = degree[users]
    first = (gen.random(n_eval) * deg).astype(np.int64)
    # A second, different position: a uniform step of 1..deg-1 from the first.
    second = (first + 1 + (gen.random(n_eval) * (deg - 1)).astype(np.int64)) % deg
    test_at, valid_at = x.indptr[users] + first, x.indptr[users] + second
    test = np.column_stack([x.indices[test_at].astype(np.int64), _competitors(x, users, n_neg, gen)])
    valid = np.column_stack([x.indices[valid_at].astype(np.int64), _competitors(x, users, n_neg, gen)])
    data = x.data.copy()
    data[test_at] = 0
    data[valid_at] = 0
    # Copies: eliminate_zeros rewrites indices/indptr in place, which must never reach the caller's matrix.
    train = sp.csr_matrix((data, x.indices.copy(), x.indptr.copy()), shape=x.shape)
    train.eliminate_zeros()
    return Holdout(users, valid, test, train)


def user_hits(scores: np.ndarray) -> np.ndarray:
    """Per-user HR@10, column 0 the positive; ties put the positive at a uniform place among its equals."""
    pos = scores[:, :1]
    greater = np.sum(scores[:, 1:] > pos, axis=1)
    equal = np.sum(scores[:, 1:] == pos, axis=1)
    return np.asarray(np.clip(HIT_AT - greater, 0, equal + 1) / (equal + 1), dtype=np.float64)


def hit_rate(scores: np.ndarray) -> float:
    """Mean of :func:`user_hits`; NaN without users."""
    return float(np.mean(user_hits(scores))) if len(scores) else float("nan")


def cosine_rows(user: np.ndarray, item: np.ndarray) -> np.ndarray:
    """Cosine of each user row against its candidate rows: user (e, d), item (e, c, d)."""
    dots = np.einsum("ed,ecd->ec", user, item)
    norms = np.linalg.norm(user, axis=1)[:, None] * np.linalg.norm(item, axis=2)
    return np.asarray(dots / np.maximum(norms, 1e-12))


def model_scores(model: torch.nn.Module, users: np.ndarray, cands: np.ndarray) -> np.ndarray:
    """The model's logit for every (user, candidate) pair, shaped like ``cands``."""
    import torch

    was_training = model.training
    model.eval()
    with torch.no_grad():
        flat_u = torch.from_numpy(np.repeat(users, cands.shape[1]))
        flat_i = torch.from_numpy(cands.reshape(-1))
        scores = model(flat_u, flat_i).double().numpy().reshape(cands.shape)
    model.train(was_training)
    return np.asarray(scores)


def embedding_scores(
    user_vec: np.ndarray, item_vec: np.ndarray, users: np.ndarray, cands: np.ndarray
) -> np.ndarray:
    """Cosine in the published space for every (user, candidate) pair."""
    return cosine_rows(user_vec[users].astype(np.float64), item_vec[cands].astype(np.float64))


def _gap_se(gap: np.ndarray) -> float | None:
    return float(np.std(gap, ddof=1) / np.sqrt(len(gap))) if len(gap) > 1 else None


def evaluate_test(
    model: torch.nn.Module, holdout: Holdout, user_vec: np.ndarray, item_vec: np.ndarray
) -> dict[str, Any]:
    """Test-item HR@10 of the model, of cosine in the published space and of popularity, and the gaps.

    ``hr@10_embedding_gap_se`` is the standard error of the mean per-user
    difference (cosine space minus popularity), which the neural gate asks the
    gap to clear; ``hr@10_gap_se`` is the same for the fused model.
    """
    cands = holdout.test
    if len(holdout.users) == 0:
        return {"eval_users": 0, "hr@10": None, "hr@10_embedding": None, "hr@10_popularity": None}
    model_hits = user_hits(model_scores(model, holdout.users, cands))
    space_hits = user_hits(embedding_scores(user_vec, item_vec, holdout.users, cands))
    popularity = np.diff(sp.csc_matrix(holdout.train).indptr)[cands].astype(np.float64)
    pop_hits = user_hits(popularity)
    return {
        "eval_users": len(holdout.users),
        "eval_candidates": int(cands.shape[1]),
        "hr@10": float(model_hits.mean()),
        "hr@10_embedding": float(space_hits.mean()),
        "hr@10_popularity": float(pop_hits.mean()),
        "hr@10_gap_se": _gap_se(model_hits - pop_hits),
        "hr@10_embedding_gap_se": _gap_se(space_hits - pop_hits),
    }
