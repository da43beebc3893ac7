"""NeuMF's training settings, apart from the trainer so that a build config can hold them without numpy.

:mod:`recworld.lrworld.config` declares ``BuildConfig.neumf`` with this class, and every
command module loads that config to make its options; :mod:`recworld.mining.neumf`
(numpy, scipy, torch on use) trains with it.
"""

from __future__ import annotations

from typing import Annotated

import pydantic

from recworld.records import MAX_INT, Settings


class NeuMFConfig(Settings, extra="forbid", frozen=True):
    """Training settings. ``epochs`` caps the time: ML-25M-sized logs stop there (docs/mining.md).

    Each epoch trains on every positive when there are at most
    ``max_train_samples``; above that, on ``min(degree, user_floor)`` positives
    of every user and ``min(degree, item_floor)`` of every item plus a uniform
    fill up to ``max_train_samples`` (floors win when they alone exceed it;
    ``None`` = always every positive). Each positive brings ``negatives``
    sampled unobserved items. ``epochs`` is the most epochs run: training stops
    once the validation HR@10 has not improved for ``patience`` epochs, and the
    best epoch's weights are kept. ``eval_users`` users (with at least three
    items) each lose two random items: one for the validation HR@10 that
    stopping watches, one for the reported test HR@10 (model, embedding space,
    popularity), each ranked against ``eval_candidates - 1`` unseen items.
    ``threads`` sets torch's intra-op threads while training (``None``: every
    core). The default is 1: NeuMF's ops are small, and on the shared 2-core box
    one epoch of ML-100K took 3.2-3.8 s on 1 thread against 42-52 s on 2.
    ``gmf_loss_weight`` weighs the GMF branch's own BCE beside the fused one
    (0: plain fused training, whose cosine space lost to popularity).
    ``min_epochs``: early stopping never ends training before this many
    epochs; at ML-25M size the cosine space sits near chance for 2-3 epochs
    (0.105, 0.098, 0.113, 0.177, 0.408, ...) before it learns, and patience
    alone would stop it there.
    """

    factors: int = pydantic.Field(32, ge=1, le=1 << 16)
    mlp_layers: tuple[Annotated[int, pydantic.Field(ge=1, le=1 << 16)], ...] = (64, 32, 16)
    negatives: int = pydantic.Field(4, ge=1, le=1 << 16)
    epochs: int = pydantic.Field(10, ge=1, le=1 << 20)
    patience: int = pydantic.Field(2, ge=1, le=1 << 20)
    min_epochs: int = pydantic.Field(5, ge=1, le=1 << 20)
    batch_size: int = pydantic.Field(32768, ge=1, le=1 << 30)
    lr: float = pydantic.Field(0.02, gt=0, le=1e3)
    max_train_samples: int | None = pydantic.Field(500_000, ge=1, le=MAX_INT)
    user_floor: int = pydantic.Field(4, ge=0, le=MAX_INT)
    item_floor: int = pydantic.Field(4, ge=0, le=MAX_INT)
    eval_users: int = pydantic.Field(1000, ge=0, le=MAX_INT)
    eval_candidates: int = pydantic.Field(100, ge=2, le=MAX_INT)
    threads: int | None = pydantic.Field(1, ge=1, le=4096)
    gmf_loss_weight: float = pydantic.Field(1.0, ge=0.0, le=1e6)

    @pydantic.field_validator("mlp_layers")
    @classmethod
    def _check_layers(cls, layers: tuple[int, ...]) -> tuple[int, ...]:
        if not layers or any(size < 1 for size in layers) or layers[0] % 2:
            raise ValueError("mlp_layers needs positive sizes and an even first size (user + item halves)")
        return layers
