"""NeuMF: determinism, learning, the per-user/per-item floors, early stopping, the weak-NeuMF guard."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from helpers.cli import run_recworld
from helpers.mining import random_interactions
from recworld.data.dataset import Dataset
from recworld.errors import ConfigError, DataError
from recworld.lrworld.builders.neural import WeakNeuMFError
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.manifest import read_manifest
from recworld.lrworld.suite import build_suite
from recworld.mining import InteractionMatrix, NeuMFConfig, dense_cosine_topk, train_neumf
from recworld.mining._neumf_sampler import Positives, epoch_examples, epoch_positives, floor_positions
from recworld.mining.neumf import _Progress


def _planted_frame(seed: int, groups: int = 4, users_per: int = 30, items_per: int = 15) -> pd.DataFrame:
    """Users of group g interact with most items of block g and one random other."""
    gen = np.random.default_rng(seed)
    n_items = groups * items_per
    users, items = [], []
    for g in range(groups):
        for u in range(users_per):
            own = np.flatnonzero(gen.random(items_per) < 0.6) + g * items_per
            noise = gen.integers(0, n_items, size=1)
            for i in (*own.tolist(), *noise.tolist()):
                users.append(f"g{g}u{u:03d}")
                items.append(f"i{i:03d}")
    return pd.DataFrame({"user_id": users, "item_id": items}).drop_duplicates()


def _planted(seed: int, **kw: int) -> tuple[InteractionMatrix, int]:
    return InteractionMatrix.from_interactions(_planted_frame(seed, **kw)), kw.get("items_per", 15)


def _popularity_only_frame(
    seed: int, n_users: int = 400, n_items: int = 120, per_user: int = 12
) -> pd.DataFrame:
    """Every user draws items from one global popularity law: no user-item structure to learn."""
    gen = np.random.default_rng(seed)
    weights = 1.0 / (np.arange(n_items) + 5.0)
    rows = [
        (f"u{u}", f"i{i}")
        for u in range(n_users)
        for i in gen.choice(n_items, size=per_user, replace=False, p=weights / weights.sum()).tolist()
    ]
    return pd.DataFrame(rows, columns=["user_id", "item_id"])


def _movie_dataset(frame: pd.DataFrame, name: str) -> Dataset:
    inter = frame.assign(timestamp=np.arange(len(frame)) + 1_000)
    item_ids = sorted(set(inter["item_id"]))
    items = pd.DataFrame({"item_id": item_ids, "title": [f"Movie {i}" for i in item_ids]})
    return Dataset.from_frames(name, "movie", inter, items)


FAST = NeuMFConfig(
    factors=8, mlp_layers=(16, 8), epochs=12, patience=12, batch_size=256, lr=0.01, eval_users=50
)


def test_same_seed_gives_identical_embeddings() -> None:
    m = InteractionMatrix.from_interactions(random_interactions(0, n_users=60, n_items=40))
    config = NeuMFConfig(factors=4, mlp_layers=(8, 4), epochs=2, batch_size=64, eval_users=10)
    before = m.matrix.copy()
    first = train_neumf(m, config, seed=11)
    assert (m.matrix != before).nnz == 0 and m.matrix.nnz == before.nnz  # the caller's matrix is untouched
    second = train_neumf(m, config, seed=11)
    other = train_neumf(m, config, seed=12)
    np.testing.assert_array_equal(first.user, second.user)
    np.testing.assert_array_equal(first.item, second.item)
    assert first.info["curve"] == second.info["curve"]
    assert not np.array_equal(first.item, other.item)
    assert first.user.shape == (60, 4) and first.item.dtype == np.float32


def test_planted_structure_is_recovered_and_loss_decreases() -> None:
    m, items_per = _planted(0)
    result = train_neumf(m, FAST, seed=0)
    losses = result.info["loss_per_epoch"]
    assert len(losses) == FAST.epochs == result.info["epochs_run"]
    assert losses[-1] < 0.7 * losses[0]
    user_group = np.array([int(u[1]) for u in m.user_ids])
    item_group = np.array([int(i[1:]) // items_per for i in m.item_ids])
    top = dense_cosine_topk(result.user, result.item, 5)
    same = item_group[top.index] == user_group[:, None]
    assert same.mean() > 0.9
    assert result.info["hr@10"] > result.info["hr@10_popularity"]
    assert result.info["hr@10_embedding"] > result.info["hr@10_popularity"]  # the space itself ranks
    assert result.info["embedding_space"] == "gmf_cosine"


# --- which positives an epoch trains on --------------------------------------------------------------


def _skewed_positives() -> tuple[Positives, np.ndarray, np.ndarray]:
    """One heavy user holding every item, 300 light users with one or two items each."""
    gen = np.random.default_rng(5)
    n_items = 400
    rows = [np.arange(n_items)] + [
        gen.choice(n_items, size=int(gen.integers(1, 3)), replace=False) for _ in range(300)
    ]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    x = sp.csr_matrix(
        (np.ones(indptr[-1], np.float32), np.concatenate(rows), indptr), shape=(len(rows), n_items)
    )
    pos = Positives.from_train(x)
    return pos, np.diff(x.indptr), np.diff(sp.csc_matrix(x).indptr)


def test_floor_positions_take_a_window_of_each_group() -> None:
    ptr = np.array([0, 5, 5, 7, 20])
    got = floor_positions(ptr, 3, np.random.default_rng(0))
    groups = np.searchsorted(ptr, got, side="right") - 1
    assert np.bincount(groups, minlength=4).tolist() == [3, 0, 2, 3]
    assert len(set(got.tolist())) == len(got)  # no position twice, even when a window wraps


def test_every_user_and_item_meets_its_floor_each_epoch() -> None:
    pos, user_degree, item_degree = _skewed_positives()
    budget = 150  # a uniform sample of 150 of ~850 positives would miss most light users
    for epoch in range(3):
        chosen = epoch_positives(pos, budget, 2, 1, np.random.default_rng(epoch))
        per_user = np.bincount(pos.users[chosen], minlength=len(user_degree))
        per_item = np.bincount(pos.items[chosen], minlength=len(item_degree))
        assert (per_user >= np.minimum(user_degree, 2)).all()
        assert (per_item >= np.minimum(item_degree, 1)).all()
        assert len(np.unique(chosen)) == len(chosen)
    # Every chosen positive reaches training with its negatives, for the same user.
    u, i, y = epoch_examples(pos, chosen, 3, np.random.default_rng(9))
    assert set(u.tolist()) == set(range(len(user_degree)))
    assert len(y) == 4 * len(chosen) and y.sum() == len(chosen)
    observed = set(zip(pos.users.tolist(), pos.items.tolist(), strict=True))
    negatives = {(a, b) for a, b, label in zip(u.tolist(), i.tolist(), y.tolist(), strict=True) if label == 0}
    # Clashes are redrawn (a user holding every item could not avoid them: check the light users).
    assert not {(a, b) for a, b in negatives if a > 0} & observed


def test_epoch_budget_fills_uniformly_and_full_passes_when_it_fits() -> None:
    pos, _, _ = _skewed_positives()
    n = len(pos)
    np.testing.assert_array_equal(epoch_positives(pos, n, 2, 2, np.random.default_rng(0)), np.arange(n))
    np.testing.assert_array_equal(epoch_positives(pos, None, 0, 0, np.random.default_rng(0)), np.arange(n))
    sizes = [len(epoch_positives(pos, 400, 0, 0, np.random.default_rng(s))) for s in range(20)]
    assert 380 < np.mean(sizes) < 420  # no floors: a uniform fill of the budget


# --- early stopping -------------------------------------------------------------------------------------


def test_progress_stops_after_patience_epochs_without_improvement() -> None:
    import torch

    model = torch.nn.Linear(1, 1)
    progress = _Progress()
    hrs = [0.1, 0.3, 0.5, 0.5, 0.4, 0.9]
    stops = [
        progress.record(model, {"epoch": e + 1, "hr@10_valid_embedding": hr}, patience=2)
        for e, hr in enumerate(hrs[:5])
    ]
    assert stops == [False, False, False, False, True]
    assert progress.best_epoch == 3 and progress.stopped_early
    # A slow start (the cosine space near chance for a few epochs) never stops before min_epochs.
    slow = _Progress()
    flat = [0.105, 0.098, 0.097, 0.096, 0.4, 0.7]
    stops = [
        slow.record(model, {"epoch": e + 1, "hr@10_valid_embedding": hr}, patience=2, min_epochs=5)
        for e, hr in enumerate(flat)
    ]
    assert stops == [False] * 6 and slow.best_epoch == 6


def test_early_stopping_keeps_the_best_epoch_on_planted_data() -> None:
    m, _ = _planted(2)
    config = FAST.model_copy(update={"epochs": 60, "patience": 2, "lr": 0.05, "eval_users": 120})
    stopped = train_neumf(m, config, seed=0)
    info = stopped.info
    valid = [row["hr@10_valid_embedding"] for row in info["curve"]]  # stopping watches the space
    assert info["stopped_early"] and info["epochs_run"] < 60
    assert info["epochs_run"] == info["best_epoch"] + 2
    assert valid[info["best_epoch"] - 1] == max(valid)
    assert all(hr <= max(valid) for hr in valid[info["best_epoch"] :])
    # The returned weights are the best epoch's: a run that stops there by budget gives the same space.
    short = train_neumf(m, config.model_copy(update={"epochs": info["best_epoch"]}), seed=0)
    np.testing.assert_array_equal(stopped.user, short.user)
    np.testing.assert_array_equal(stopped.item, short.item)


def test_config_validation() -> None:
    with pytest.raises(ValueError, match="mlp_layers"):
        NeuMFConfig(mlp_layers=(7, 4))
    with pytest.raises(ValueError):
        NeuMFConfig(unknown=1)  # type: ignore[call-arg]
    tiny = InteractionMatrix.from_interactions(pd.DataFrame({"user_id": ["a", "b"], "item_id": ["x", "y"]}))
    with pytest.raises(ConfigError):
        train_neumf(tiny, NeuMFConfig(negatives=2), seed=0)
    empty = InteractionMatrix(tiny.matrix[:0], tiny.user_ids[:0], tiny.item_ids)
    with pytest.raises(DataError):
        train_neumf(empty, NeuMFConfig(), seed=0)


def test_lazy_adam_matches_torch_sparse_adam_bit_for_bit() -> None:
    import torch

    from recworld.mining._lazy_adam import LazyAdam

    torch.manual_seed(0)
    ours = torch.nn.Embedding(50, 6, sparse=True)
    ref = torch.nn.Embedding(50, 6, sparse=True)
    ref.load_state_dict(ours.state_dict())
    opt_ours = LazyAdam(list(ours.parameters()), lr=0.01)
    opt_ref = torch.optim.SparseAdam(list(ref.parameters()), lr=0.01)
    gen = torch.Generator().manual_seed(1)
    for _ in range(6):
        rows = torch.randint(0, 50, (40,), generator=gen)  # duplicates: coalesce must sum them
        target = torch.randn(40, 6, generator=gen)
        for table, opt in ((ours, opt_ours), (ref, opt_ref)):
            opt.zero_grad()
            ((table(rows) - target) ** 2).sum().backward()
            opt.step()
        assert torch.equal(ours.weight, ref.weight)
    assert not torch.equal(ours.weight, torch.nn.Embedding(50, 6).weight)


# --- the weak-NeuMF guard and the manifest --------------------------------------------------------------


def test_weak_neural_space_skips_its_measures_and_the_build_exits_0(tmp_path: Path) -> None:
    cache = _movie_dataset(_popularity_only_frame(0), "flat").save(tmp_path / "flat")
    out = tmp_path / "suite"
    argv = ["build", "--dataset", str(cache), "--out", str(out), "--per-measure", "5", "--no-progress"]
    argv += ["--measures", "neu_user2items,neu_item2users,assoc_rule"]
    ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr
    err = [line for line in ran.stderr.splitlines() if line.strip()]
    warned = [line for line in err if "skipped" in line]
    assert len(warned) == 1, err  # one warning, naming both measures and the figures
    assert "neu_user2items" in warned[0] and "neu_item2users" in warned[0] and "HR@10" in warned[0]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["assoc_rule"] == 5  # every other measure was written
    assert set(manifest["skipped"]) == {"neu_user2items", "neu_item2users"}
    assert all("does not beat popularity" in r for r in manifest["skipped"].values())
    (gate,) = manifest["gates"]
    assert gate["gate"] == "neural" and gate["outcome"] == "skipped" and not gate["passed"]
    assert sorted(gate["measures"]) == ["neu_item2users", "neu_user2items"]
    figures = gate["figures"]
    assert figures["hr_at_10_embedding"] <= figures["hr_at_10_popularity"] + 2 * figures["gap_se"]
    assert manifest["neumf"]["verdict"] == "weak" and manifest["neumf"]["space"] == "gmf_cosine"

    strict = tmp_path / "strict"
    ran = run_recworld(*argv[:4], str(strict), *argv[5:], "--require-neural")
    assert ran.returncode == 3
    assert "does not beat popularity" in ran.stderr
    assert not strict.exists()  # a required gate that fails writes nothing

    ran = run_recworld(*argv, "--allow-weak-neumf", "--force")
    assert ran.returncode == 0, ran.stderr
    record = json.loads((out / "manifest.json").read_text())
    assert record["neumf"]["verdict"] == "weak" and record["neumf"]["allowed_weak"] is True
    assert {"neu_user2items", "neu_item2users"} <= set(record["counts"])
    assert record["gates"][0]["outcome"] == "built_weak"


def test_required_neural_gate_is_a_run_failure_and_neural_alone_is_a_data_error() -> None:
    data = _movie_dataset(_popularity_only_frame(1), "flat")
    with pytest.raises(WeakNeuMFError) as caught:
        build_suite(
            data,
            BuildConfig(measures=("neu_item2users",), per_measure=5, require_neural=True),
            Path("/nonexistent/never"),
        )
    assert caught.value.exit_code == 3
    with pytest.raises(DataError, match="neural gate"):
        build_suite(
            data, BuildConfig(measures=("neu_item2users",), per_measure=5), Path("/nonexistent/never")
        )


def test_manifest_carries_the_curve_and_beats_popularity_on_planted_data(tmp_path: Path) -> None:
    data = _movie_dataset(_planted_frame(3, users_per=40), "planted")
    config = BuildConfig(measures=("neu_user2items", "neu_item2users"), per_measure=5, neumf=FAST)
    manifest = build_suite(data, config, tmp_path / "a")
    record = manifest.neumf
    assert record is not None
    assert record.verdict == "beats_popularity" and record.allowed_weak is False
    assert record.hr_at_10 is not None and record.hr_at_10_popularity is not None
    assert record.hr_at_10 > record.hr_at_10_popularity
    assert len(record.curve) == record.epochs_run == FAST.epochs
    assert [row.epoch for row in record.curve] == list(range(1, FAST.epochs + 1))
    assert all(row.loss > 0 and row.hr_at_10 is not None and 0 <= row.hr_at_10 <= 1 for row in record.curve)
    assert read_manifest(tmp_path / "a").neumf is not None  # typed on the way back in
    again = build_suite(data, config, tmp_path / "b")
    assert again.neumf == record and again.questions_sha256 == manifest.questions_sha256
    no_neural = build_suite(data, BuildConfig(measures=("assoc_rule",), per_measure=3), tmp_path / "c")
    assert no_neural.neumf is None


@pytest.mark.slow
def test_beats_popularity_on_ml100k(ml100k_raw: Path) -> None:
    frame = pd.read_csv(ml100k_raw / "ml-100k.inter", sep="\t")
    frame.columns = ["user_id", "item_id", "rating", "timestamp"]
    m = InteractionMatrix.from_interactions(frame)
    result = train_neumf(m, NeuMFConfig(), seed=0)  # the build's defaults
    info = result.info
    print(
        f"ML-100K NeuMF: test HR@10 {info['hr@10']:.3f}, popularity {info['hr@10_popularity']:.3f}, "
        f"cosine space {info['hr@10_embedding']:.3f} (gap SE {info['hr@10_embedding_gap_se']:.3f}), "
        f"{info['epochs_run']} epochs (best {info['best_epoch']}), "
        f"{info['train_seconds']:.1f} s"
    )
    assert info["eval_users"] == 943  # every ML-100K user has at least 20 ratings
    # The space the neu_* questions rank in (cosine of the GMF factors) beats popularity on its own:
    # measured 0.78 against 0.56, 14 standard errors.
    assert info["hr@10_embedding"] > info["hr@10_popularity"] + 0.15
    assert info["hr@10_embedding"] - info["hr@10_popularity"] > 5 * info["hr@10_embedding_gap_se"]
    assert info["hr@10"] > info["hr@10_popularity"] + 0.15  # the fused model too
    # ML-100K fits the budget: every epoch is a full pass over the training positives.
    assert all(row["positives"] == info["positives"] for row in info["curve"])
