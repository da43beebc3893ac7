"""Neural matrix factorisation (He et al., 2017) for the neu_* ground truth.

NeuMF fuses a GMF branch (element-wise product of user and item factors) and
an MLP branch (a tower over concatenated user and item embeddings); the two
outputs are concatenated and one linear layer turns them into the logit. It is
trained on implicit feedback with binary cross-entropy, ``negatives`` sampled
unobserved items per observed one, and Adam. Unlike the paper we train both
branches jointly from scratch (no GMF/MLP pre-training): it is simpler and the
held-out hit rate in ``info`` shows it learns.

Which space is "closest in NeuMF embedding space"? The MLP branch scores a
pair through a non-linear tower, so no cosine over its embeddings (alone or
concatenated with GMF's) ranks pairs the way the model does. The GMF branch
does: its contribution to the logit is ``sum_f h_f * p_uf * q_if`` where ``h``
is the GMF part of the prediction layer. We therefore publish
``user = p * sqrt(|h|)`` and ``item = q * sqrt(|h|) * sign(h)``, whose dot
product is exactly that logit term, so cosine in this space is the GMF score
with both norms divided out. Users and items live in one space, which the
user->items and item->users measures and k-means all need.

Every random draw is seeded: initial weights through ``torch.manual_seed`` with a
:func:`recworld.seeding.child_seed`, sampling and the held-out split through
:func:`recworld.seeding.rng`; deterministic algorithms are switched on while
training, so one seed gives identical embeddings on one machine.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pydantic
import scipy.sparse as sp

from recworld.errors import ConfigError, DataError
from recworld.mining.matrix import InteractionMatrix
from recworld.seeding import child_seed, rng

if TYPE_CHECKING:
    import torch

_HIT_AT = 10


class NeuMFConfig(pydantic.BaseModel, extra="forbid", frozen=True):
    """Training settings. The defaults train ML-25M in about a minute on 2 CPU cores.

    ``max_train_samples`` caps the positives drawn (without replacement) per
    epoch; each brings ``negatives`` sampled negatives, so an epoch sees at most
    ``max_train_samples * (1 + negatives)`` examples. ``None`` uses every positive.
    ``eval_users`` users (with at least two items) each lose one random item to a
    held-out leave-one-out check: HR@10 against ``eval_candidates - 1`` sampled
    unseen items, for the model, its embedding space, and popularity.
    ``threads`` sets torch's intra-op threads while training (``None``: every core).
    The default is 1: NeuMF's ops are small, and on the shared 2-core box one
    epoch of ML-100K took 3.2-3.8 s on 1 thread against 42-52 s on 2 (thread
    hand-offs under contention cost far more than the maths).
    """

    factors: int = pydantic.Field(32, ge=1)
    mlp_layers: tuple[int, ...] = (64, 32, 16)
    negatives: int = pydantic.Field(4, ge=1)
    epochs: int = pydantic.Field(5, ge=1)
    batch_size: int = pydantic.Field(8192, ge=1)
    lr: float = pydantic.Field(0.002, gt=0)
    max_train_samples: int | None = pydantic.Field(200_000, ge=1)
    eval_users: int = pydantic.Field(1000, ge=0)
    eval_candidates: int = pydantic.Field(100, ge=2)
    threads: int | None = pydantic.Field(1, ge=1)

    @pydantic.field_validator("mlp_layers")
    @classmethod
    def _check_layers(cls, layers: tuple[int, ...]) -> tuple[int, ...]:
        if not layers or any(size < 1 for size in layers) or layers[0] % 2:
            raise ValueError("mlp_layers needs positive sizes and an even first size (user + item halves)")
        return layers


@dataclass(frozen=True)
class NeuMFEmbeddings:
    """User and item vectors in the GMF-scaled space (see the module docstring), plus training facts."""

    user: np.ndarray
    item: np.ndarray
    info: dict[str, Any]


def _build_model(n_users: int, n_items: int, config: NeuMFConfig) -> torch.nn.Module:
    import torch
    from torch import nn

    class NeuMF(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            half = config.mlp_layers[0] // 2
            # Sparse gradients: an optimiser step touches only the rows a batch used.
            self.gmf_user = nn.Embedding(n_users, config.factors, sparse=True)
            self.gmf_item = nn.Embedding(n_items, config.factors, sparse=True)
            self.mlp_user = nn.Embedding(n_users, half, sparse=True)
            self.mlp_item = nn.Embedding(n_items, half, sparse=True)
            layers: list[nn.Module] = []
            for size_in, size_out in zip(config.mlp_layers, config.mlp_layers[1:], strict=False):
                layers += [nn.Linear(size_in, size_out), nn.ReLU()]
            self.tower = nn.Sequential(*layers)
            self.predict = nn.Linear(config.factors + config.mlp_layers[-1], 1)
            for table in (self.gmf_user, self.gmf_item, self.mlp_user, self.mlp_item):
                nn.init.normal_(table.weight, std=0.01)

        def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
            gmf = self.gmf_user(users) * self.gmf_item(items)
            mlp = self.tower(torch.cat([self.mlp_user(users), self.mlp_item(items)], dim=1))
            out: torch.Tensor = self.predict(torch.cat([gmf, mlp], dim=1)).squeeze(1)
            return out

    return NeuMF()


class _LazyAdam:
    """``torch.optim.SparseAdam``'s update, bit for bit, with row gathers instead of sparse tensors.

    SparseAdam reads and writes its moment and parameter rows through
    ``sparse_mask`` and dense ``add_(sparse)``; under
    ``use_deterministic_algorithms`` those took 60% of NeuMF's time (23 of 35 s
    of optimiser steps on a 1M-review Amazon category). Here the same
    float32 operations, in the same order, run on the touched rows gathered
    with ``index_select`` and written back with ``index_copy_`` (rows are
    unique after ``coalesce``, so ``old + update`` is exactly what the
    sparse add stored). Same seed, same embeddings as SparseAdam (tested).
    """

    def __init__(
        self,
        params: Sequence[torch.Tensor],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ) -> None:
        import torch

        self.params = list(params)
        self.lr, self.betas, self.eps = lr, betas, eps
        self.steps = [0] * len(params)
        self.exp_avg = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in params]
        self.exp_avg_sq = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        import torch

        beta1, beta2 = self.betas
        with torch.no_grad():
            for i, param in enumerate(self.params):
                if param.grad is None:
                    continue
                grad = param.grad.coalesce()
                values = grad._values()
                if values.numel() == 0:
                    continue
                rows = grad._indices()[0]
                self.steps[i] += 1
                exp_avg, exp_avg_sq = self.exp_avg[i], self.exp_avg_sq[i]
                old_avg = exp_avg.index_select(0, rows)
                avg_update = values.sub(old_avg).mul_(1 - beta1)
                exp_avg.index_copy_(0, rows, old_avg + avg_update)
                old_sq = exp_avg_sq.index_select(0, rows)
                sq_update = values.pow(2).sub_(old_sq).mul_(1 - beta2)
                exp_avg_sq.index_copy_(0, rows, old_sq + sq_update)
                numer = avg_update.add_(old_avg)
                denom = sq_update.add_(old_sq).sqrt_().add_(self.eps)
                step = self.steps[i]
                step_size = self.lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
                param.index_copy_(0, rows, param.index_select(0, rows) + (-step_size * numer.div_(denom)))


@dataclass(frozen=True)
class _Holdout:
    users: np.ndarray  # (e,) eval users
    candidates: np.ndarray  # (e, c) item columns, column 0 is the held-out item
    train: sp.csr_matrix


def _holdout(x: sp.csr_matrix, config: NeuMFConfig, seed: int) -> _Holdout:
    """Remove one random item of up to ``eval_users`` users; draw unseen items as competitors."""
    gen = rng(seed, "mining", "neumf", "holdout")
    n_items = x.shape[1]
    degree = np.diff(x.indptr)
    # Small catalogues get fewer competitors: at most half the items, so most users qualify.
    n_neg = min(config.eval_candidates - 1, n_items // 2)
    eligible = np.flatnonzero((degree >= 2) & (n_items - degree >= n_neg))
    n_eval = min(config.eval_users, len(eligible))
    if n_eval == 0 or n_neg < 1:
        return _Holdout(np.zeros(0, np.int64), np.zeros((0, n_neg + 1), np.int64), x)
    users = np.sort(gen.choice(eligible, size=n_eval, replace=False))
    offsets = x.indptr[users] + (gen.random(n_eval) * degree[users]).astype(np.int64)
    held = x.indices[offsets].astype(np.int64)
    candidates = np.empty((n_eval, n_neg + 1), dtype=np.int64)
    candidates[:, 0] = held
    for row, user in enumerate(users):
        seen = x.indices[x.indptr[user] : x.indptr[user + 1]]
        pool = gen.choice(n_items, size=min(n_items, 4 * n_neg + len(seen)), replace=False)
        candidates[row, 1:] = pool[~np.isin(pool, seen)][:n_neg]
    data = x.data.copy()
    data[offsets] = 0
    # Copies: eliminate_zeros rewrites indices/indptr in place, which must never reach the caller's matrix.
    train = sp.csr_matrix((data, x.indices.copy(), x.indptr.copy()), shape=x.shape)
    train.eliminate_zeros()
    return _Holdout(users, candidates, train)


def _contains(sorted_keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    at = np.minimum(np.searchsorted(sorted_keys, queries), len(sorted_keys) - 1)
    return np.asarray(sorted_keys[at] == queries)


def _epoch_examples(
    users: np.ndarray,
    items: np.ndarray,
    keys: np.ndarray,
    n_items: int,
    config: NeuMFConfig,
    gen: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shuffled (user, item, label) arrays: a budget of positives plus fresh negatives."""
    n_pos = len(users)
    if config.max_train_samples is not None and n_pos > config.max_train_samples:
        chosen = gen.choice(n_pos, size=config.max_train_samples, replace=False)
    else:
        chosen = np.arange(n_pos)
    pos_u, pos_i = users[chosen], items[chosen]
    neg_u = np.repeat(pos_u, config.negatives)
    neg_i = gen.integers(0, n_items, size=len(neg_u))
    for _ in range(3):  # redraw the few negatives that hit an observed pair
        clash = np.flatnonzero(_contains(keys, neg_u * n_items + neg_i))
        if len(clash) == 0:
            break
        neg_i[clash] = gen.integers(0, n_items, size=len(clash))
    all_u = np.concatenate([pos_u, neg_u])
    all_i = np.concatenate([pos_i, neg_i])
    labels = np.concatenate([np.ones(len(pos_u), np.float32), np.zeros(len(neg_u), np.float32)])
    order = gen.permutation(len(all_u))
    return all_u[order], all_i[order], labels[order]


def _hit_rate(scores: np.ndarray) -> float:
    """HR@10 with column 0 the positive; ties put the positive at a uniform place among its equals."""
    if len(scores) == 0:
        return float("nan")
    pos = scores[:, :1]
    greater = np.sum(scores[:, 1:] > pos, axis=1)
    equal = np.sum(scores[:, 1:] == pos, axis=1)
    hits = np.clip(_HIT_AT - greater, 0, equal + 1) / (equal + 1)
    return float(np.mean(hits))


def _gmf_space(model: torch.nn.Module, factors: int) -> tuple[np.ndarray, np.ndarray]:
    import torch

    with torch.no_grad():
        params = dict(model.named_parameters())
        h = params["predict.weight"][0, :factors].double()
        scale = h.abs().sqrt()
        user = params["gmf_user.weight"].double() * scale
        item = params["gmf_item.weight"].double() * scale * torch.sign(h)
    return user.float().numpy().copy(), item.float().numpy().copy()


def _cosine_rows(user: np.ndarray, item: np.ndarray) -> np.ndarray:
    """Cosine of each user row against its candidate rows: user (e, d), item (e, c, d)."""
    dots = np.einsum("ed,ecd->ec", user, item)
    norms = np.linalg.norm(user, axis=1)[:, None] * np.linalg.norm(item, axis=2)
    return np.asarray(dots / np.maximum(norms, 1e-12))


def train_neumf(m: InteractionMatrix, config: NeuMFConfig, seed: int) -> NeuMFEmbeddings:
    """Train NeuMF on the binary matrix and return user and item vectors in the GMF-scaled space."""
    import torch

    x = sp.csr_matrix(m.matrix)
    if x.nnz == 0:
        raise DataError("the interaction matrix is empty: NeuMF has nothing to learn", field="interactions")
    if config.negatives >= x.shape[1]:
        raise ConfigError(f"negatives={config.negatives} needs more than {x.shape[1]} items")
    started = time.perf_counter()
    holdout = _holdout(x, config, seed)
    train = holdout.train.tocoo()
    order = np.lexsort((train.col, train.row))
    users = train.row[order].astype(np.int64)
    items = train.col[order].astype(np.int64)
    n_items = x.shape[1]
    keys = users * n_items + items

    previous_threads = torch.get_num_threads()
    previous_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(config.threads or os.cpu_count() or 1)
    torch.use_deterministic_algorithms(True)
    try:
        torch.manual_seed(child_seed(seed, "mining", "neumf", "init"))
        model = _build_model(x.shape[0], n_items, config)
        sparse_params = [
            p for name, p in model.named_parameters() if name.split(".")[0].startswith(("gmf", "mlp"))
        ]
        dense_params = [
            p for name, p in model.named_parameters() if name.split(".")[0] in ("tower", "predict")
        ]
        optimisers: list[torch.optim.Optimizer | _LazyAdam] = [
            _LazyAdam(sparse_params, lr=config.lr),
            torch.optim.Adam(dense_params, lr=config.lr),
        ]
        loss_fn = torch.nn.BCEWithLogitsLoss(reduction="sum")
        losses: list[float] = []
        examples_seen = 0
        for epoch in range(config.epochs):
            gen = rng(seed, "mining", "neumf", "epoch", epoch)
            ep_u, ep_i, ep_y = _epoch_examples(users, items, keys, n_items, config, gen)
            tu, ti, ty = torch.from_numpy(ep_u), torch.from_numpy(ep_i), torch.from_numpy(ep_y)
            total = 0.0
            model.train()
            for start in range(0, len(ep_u), config.batch_size):
                stop = start + config.batch_size
                for opt in optimisers:
                    opt.zero_grad()
                loss = loss_fn(model(tu[start:stop], ti[start:stop]), ty[start:stop])
                (loss / (min(stop, len(ep_u)) - start)).backward()
                for opt in optimisers:
                    opt.step()
                total += float(loss.detach())
            losses.append(total / len(ep_u))
            examples_seen += len(ep_u)
        model.eval()
        train_seconds = time.perf_counter() - started
        user_vec, item_vec = _gmf_space(model, config.factors)
        info = _evaluate(model, holdout, x, user_vec, item_vec)
    finally:
        torch.set_num_threads(previous_threads)
        torch.use_deterministic_algorithms(previous_deterministic)
    info.update(
        {
            "embedding_space": "gmf_scaled",
            "loss_per_epoch": losses,
            "train_seconds": train_seconds,
            "examples_seen": examples_seen,
            "positives": len(users),
            "config": config.model_dump(mode="json"),
            "seed": seed,
        }
    )
    return NeuMFEmbeddings(user=user_vec, item=item_vec, info=info)


def _evaluate(
    model: torch.nn.Module, holdout: _Holdout, x: sp.csr_matrix, user_vec: np.ndarray, item_vec: np.ndarray
) -> dict[str, Any]:
    """Leave-one-out HR@10 of the model, of cosine in the published space, and of popularity."""
    import torch

    cands = holdout.candidates
    if len(holdout.users) == 0:
        return {"eval_users": 0, "hr@10": None, "hr@10_embedding": None, "hr@10_popularity": None}
    with torch.no_grad():
        flat_u = torch.from_numpy(np.repeat(holdout.users, cands.shape[1]))
        flat_i = torch.from_numpy(cands.reshape(-1))
        model_scores = model(flat_u, flat_i).double().numpy().reshape(cands.shape)
    popularity = np.diff(sp.csc_matrix(holdout.train).indptr)[cands]
    embed_scores = _cosine_rows(
        user_vec[holdout.users].astype(np.float64), item_vec[cands].astype(np.float64)
    )
    return {
        "eval_users": len(holdout.users),
        "eval_candidates": int(cands.shape[1]),
        "hr@10": _hit_rate(model_scores),
        "hr@10_embedding": _hit_rate(embed_scores),
        "hr@10_popularity": _hit_rate(popularity.astype(np.float64)),
    }
