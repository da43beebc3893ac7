"""Neural matrix factorisation (He et al., 2017) for the neu_* ground truth, with a cosine GMF branch.

NeuMF fuses a GMF branch (user and item factors) and an MLP branch (a tower
over concatenated user and item embeddings) into one logit. It is trained on
implicit feedback with binary cross-entropy, ``negatives`` sampled unobserved
items per observed one, and Adam.

Which space is "closest in NeuMF embedding space"? The neu_* questions rank
by *cosine*, so the space they use must rank held-out items well by cosine,
and the standard model gives no such space: its MLP scores through a
non-linear tower, and its GMF term ``sum_f h_f p_uf q_if`` puts popularity
in the vector norms, which cosine divides out (on ML-100K the best such
space ranked held-out items below popularity). Here the GMF branch scores a
pair by ``tau * cos(p_u, q_i)`` (a learned temperature ``tau > 0``), added to
the MLP's logit: NeuMF's fusion layer with a positive weight on a scalar GMF
output. He et al. pre-train GMF on its own before fusing; we train the GMF
branch's own loss (``BCE(tau * cos + b)``, weighted ``gmf_loss_weight``)
beside the fused one, so the GMF factors form a ranker by cosine in their
own right instead of handing popularity to the MLP. The published space is
the GMF factor tables themselves: cosine there is exactly the GMF branch's
score divided by ``tau``. Users and items share it, which the
user->items and item->users measures and spherical k-means all need.
Early stopping watches that space's validation HR@10, and the build gates
on its test HR@10 against popularity (docs/mining.md).

Every random draw is seeded: initial weights through ``torch.manual_seed`` with a
:func:`recworld.seeding.child_seed`, sampling and the held-out split through
:func:`recworld.seeding.rng`; deterministic algorithms are switched on while
training, so one seed gives identical embeddings on one machine.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from recworld.errors import ConfigError, DataError
from recworld.mining._lazy_adam import LazyAdam
from recworld.mining._neumf_holdout import (
    Holdout,
    embedding_scores,
    evaluate_test,
    hit_rate,
    holdout_split,
    model_scores,
)
from recworld.mining._neumf_sampler import Positives, epoch_examples, epoch_positives
from recworld.mining.matrix import InteractionMatrix
from recworld.mining.neumf_config import NeuMFConfig
from recworld.seeding import child_seed, rng

if TYPE_CHECKING:
    import torch

_log = logging.getLogger(__name__)

# What ``info["embedding_space"]`` names: the GMF factor tables, trained to rank by cosine.
EMBEDDING_SPACE = "gmf_cosine"
GMF_TAU_INIT = 5.0  # the GMF branch's initial temperature (learned; ML-100K ends near 14)
GMF_INIT_STD = 0.1  # cosine ignores the scale; a small one only slows the first steps


@dataclass(frozen=True)
class NeuMFEmbeddings:
    """User and item vectors of the cosine GMF branch (see the module docstring), plus training facts."""

    user: np.ndarray
    item: np.ndarray
    info: dict[str, Any]


def _build_model(n_users: int, n_items: int, config: NeuMFConfig) -> torch.nn.Module:
    import math

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
            self.predict = nn.Linear(config.mlp_layers[-1], 1)
            # The GMF branch's weight in the fused logit (log, so it stays positive) and its own bias.
            self.log_tau = nn.Parameter(torch.tensor(math.log(GMF_TAU_INIT)))
            self.gmf_bias = nn.Parameter(torch.zeros(()))
            for table in (self.mlp_user, self.mlp_item):
                nn.init.normal_(table.weight, std=0.01)
            for table in (self.gmf_user, self.gmf_item):
                nn.init.normal_(table.weight, std=GMF_INIT_STD)

        def gmf_cosine(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
            p = nn.functional.normalize(self.gmf_user(users), dim=1)
            q = nn.functional.normalize(self.gmf_item(items), dim=1)
            return (p * q).sum(dim=1)

        def logits(self, users: torch.Tensor, items: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            """The fused NeuMF logit and the GMF branch's own logit, for one batch."""
            gmf = self.log_tau.exp() * self.gmf_cosine(users, items)
            mlp = self.tower(torch.cat([self.mlp_user(users), self.mlp_item(items)], dim=1))
            fused: torch.Tensor = gmf + self.predict(mlp).squeeze(1)
            return fused, gmf + self.gmf_bias

        def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
            return self.logits(users, items)[0]

    return NeuMF()


def _gmf_space(model: torch.nn.Module) -> tuple[np.ndarray, np.ndarray]:
    """The GMF factor tables: cosine between a user row and an item row is the GMF branch's score / tau."""
    import torch

    with torch.no_grad():
        params = dict(model.named_parameters())
        user, item = params["gmf_user.weight"], params["gmf_item.weight"]
    return user.detach().float().numpy().copy(), item.detach().float().numpy().copy()


@contextmanager
def _torch_state(threads: int) -> Iterator[None]:
    """Deterministic kernels and a fixed thread count for one training run, restored afterwards.

    Both are process-wide torch settings: the caller's must survive a build.
    """
    import torch

    previous_threads = torch.get_num_threads()
    previous_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(previous_threads)
        torch.use_deterministic_algorithms(previous_deterministic)


def _optimisers(model: torch.nn.Module, lr: float) -> list[torch.optim.Optimizer | LazyAdam]:
    """Lazy Adam for the embedding tables (a step touches only the batch's rows), Adam for the rest."""
    import torch

    params = list(model.named_parameters())
    tables = ("gmf_user", "gmf_item", "mlp_user", "mlp_item")
    sparse_params = [p for name, p in params if name.split(".")[0] in tables]
    dense_params = [p for name, p in params if name.split(".")[0] not in tables]
    return [LazyAdam(sparse_params, lr=lr), torch.optim.Adam(dense_params, lr=lr)]


def _run_epoch(
    model: torch.nn.Module,
    optimisers: list[torch.optim.Optimizer | LazyAdam],
    examples: tuple[np.ndarray, np.ndarray, np.ndarray],
    batch_size: int,
    gmf_weight: float,
) -> float:
    """One pass over the epoch's examples; returns the mean fused-model BCE per example.

    The step minimises the fused BCE plus ``gmf_weight`` times the GMF branch's own BCE.
    """
    import torch

    tu, ti, ty = (torch.from_numpy(a) for a in examples)
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="sum")
    total = 0.0
    model.train()
    for start in range(0, len(ty), batch_size):
        stop = min(start + batch_size, len(ty))
        for opt in optimisers:
            opt.zero_grad()
        fused, gmf = model.logits(tu[start:stop], ti[start:stop])  # type: ignore[operator]
        labels = ty[start:stop]
        loss = loss_fn(fused, labels)
        objective = loss + gmf_weight * loss_fn(gmf, labels) if gmf_weight else loss
        (objective / (stop - start)).backward()
        for opt in optimisers:
            opt.step()
        total += float(loss.detach())
    return total / max(len(ty), 1)


def _validate(model: torch.nn.Module, holdout: Holdout) -> tuple[float | None, float | None]:
    """Validation HR@10 of the model and of cosine in the published space (None without eval users)."""
    if len(holdout.users) == 0:
        return None, None
    user_vec, item_vec = _gmf_space(model)
    cands = holdout.valid
    return (
        hit_rate(model_scores(model, holdout.users, cands)),
        hit_rate(embedding_scores(user_vec, item_vec, holdout.users, cands)),
    )


@dataclass
class _Progress:
    """The curve so far and the best epoch's weights (what early stopping keeps).

    Stopping watches the validation HR@10 of cosine in the published space
    (``hr@10_valid_embedding``): that space is what the questions rank with.
    """

    curve: list[dict[str, Any]] = field(default_factory=list)
    best_hr: float | None = None
    best_epoch: int = 0
    best_state: dict[str, Any] | None = None
    stopped_early: bool = False

    def record(self, model: torch.nn.Module, row: dict[str, Any], patience: int, min_epochs: int = 1) -> bool:
        """Add one epoch; True when training should stop (``patience`` epochs without a better HR@10,
        never before ``min_epochs``)."""
        self.curve.append(row)
        hr = row["hr@10_valid_embedding"]
        if hr is None:
            self.best_epoch = row["epoch"]
            return False
        if self.best_hr is None or hr > self.best_hr:
            self.best_hr, self.best_epoch = hr, row["epoch"]
            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            return False
        self.stopped_early = row["epoch"] - self.best_epoch >= patience and row["epoch"] >= min_epochs
        return self.stopped_early


def _train_epochs(
    model: torch.nn.Module,
    positives: Positives,
    holdout: Holdout,
    config: NeuMFConfig,
    seed: int,
    on_epoch: Callable[[int, int], None] | None = None,
) -> _Progress:
    """Train until ``config.epochs`` or early stopping; the model ends with the best epoch's weights."""
    optimisers = _optimisers(model, config.lr)
    progress = _Progress()
    for epoch in range(config.epochs):
        gen = rng(seed, "mining", "neumf", "epoch", epoch)
        chosen = epoch_positives(
            positives, config.max_train_samples, config.user_floor, config.item_floor, gen
        )
        examples = epoch_examples(positives, chosen, config.negatives, gen)
        loss = _run_epoch(model, optimisers, examples, config.batch_size, config.gmf_loss_weight)
        hr, hr_embedding = _validate(model, holdout)
        row = {
            "epoch": epoch + 1,
            "loss": loss,
            "positives": len(chosen),
            "examples": len(examples[0]),
            "hr@10_valid": hr,
            "hr@10_valid_embedding": hr_embedding,
        }
        _log.info(
            "epoch %d: %d positives, loss %.4f, validation HR@10 model %s, cosine space %s",
            *(epoch + 1, len(chosen), loss, hr, hr_embedding),
        )
        if on_epoch is not None:
            on_epoch(epoch + 1, config.epochs)
        if progress.record(model, row, config.patience, config.min_epochs):
            break
    if progress.best_state is not None:
        model.load_state_dict(progress.best_state)
    return progress


def train_neumf(
    m: InteractionMatrix,
    config: NeuMFConfig,
    seed: int,
    on_epoch: Callable[[int, int], None] | None = None,
) -> NeuMFEmbeddings:
    """Train NeuMF on the binary matrix and return its GMF user and item factors (the cosine space).

    ``on_epoch(done, most)`` is called after each epoch (a progress display).
    """
    import torch

    x = sp.csr_matrix(m.matrix)
    if x.nnz == 0:
        raise DataError("the interaction matrix is empty: NeuMF has nothing to learn", field="interactions")
    if config.negatives >= x.shape[1]:
        raise ConfigError(f"negatives={config.negatives} needs more than {x.shape[1]} items")
    started = time.perf_counter()
    holdout = holdout_split(x, config.eval_users, config.eval_candidates, seed)
    positives = Positives.from_train(holdout.train)
    with _torch_state(config.threads or os.cpu_count() or 1):
        torch.manual_seed(child_seed(seed, "mining", "neumf", "init"))
        model = _build_model(x.shape[0], positives.n_items, config)
        progress = _train_epochs(model, positives, holdout, config, seed, on_epoch)
        model.eval()
        user_vec, item_vec = _gmf_space(model)
        info = evaluate_test(model, holdout, user_vec, item_vec)
        info["gmf_tau"] = float(dict(model.named_parameters())["log_tau"].detach().exp())
    info.update(
        {
            "embedding_space": EMBEDDING_SPACE,
            "curve": progress.curve,
            "loss_per_epoch": [row["loss"] for row in progress.curve],
            "epochs_run": len(progress.curve),
            "best_epoch": progress.best_epoch,
            "stopped_early": progress.stopped_early,
            "train_seconds": time.perf_counter() - started,
            "examples_seen": sum(row["examples"] for row in progress.curve),
            "positives": len(positives),
            "config": config.model_dump(mode="json"),
            "seed": seed,
        }
    )
    return NeuMFEmbeddings(user=user_vec, item=item_vec, info=info)
