"""``BuildConfig.negatives``: uniform hit@1 negatives (the paper, default) or popularity-weighted ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from helpers.cli import run_recworld
from helpers.lrworld.checks import FAST_NEUMF, basic_checks, build, reference_check
from helpers.lrworld.datasets import make_movie_dataset
from recworld.baselines.classic import create
from recworld.data.dataset import Dataset, Domain
from recworld.lrworld.builders.base import draw_distinct, negative_weights
from recworld.lrworld.catalogue import MEASURES, MEASURES_BY_ID, OptionKind
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.context import BuildContext
from recworld.lrworld.schema import Question
from recworld.lrworld.suite import build_suite
from recworld.models.registry import ModelConfig, ModelSpec
from recworld.seeding import rng

_MOVIE = [m for m in MEASURES if Domain.MOVIE in m.domains]
# Options that are items or users are drawn as negatives (the ``negatives`` knob);
# attribute values are distractors (the ``distractors`` knob).
DRAWN_MEASURES = tuple(m.id for m in _MOVIE if m.options is not OptionKind.ATTRIBUTE)
ATTRIBUTE_MEASURES = tuple(m.id for m in _MOVIE if m.options is OptionKind.ATTRIBUTE)


def cfg(**kw: Any) -> BuildConfig:
    base: dict[str, Any] = {"per_measure": 15, "neumf": FAST_NEUMF}
    base.update(kw)
    return BuildConfig.model_validate(base)


def skewed_blocks(n_users: int = 300, n_items: int = 200, blocks: int = 5, seed: int = 0) -> Dataset:
    """Taste blocks with a Zipf popularity inside each: rules stay in a block, popular heads in every block.

    Uniform negatives come from the other blocks' long tails, so the most popular
    option is nearly always the answer; popularity-weighted negatives bring in the
    other blocks' heads.
    """
    gen = np.random.default_rng(seed)
    size = n_items // blocks
    zipf = 1.0 / np.arange(1, size + 1)
    zipf /= zipf.sum()
    rows = []
    for u in range(n_users):
        own = (u % blocks) * size + gen.choice(size, size=int(gen.integers(8, 20)), replace=False, p=zipf)
        for t, item in enumerate([*own.tolist(), int(gen.integers(n_items))]):
            rows.append({"user_id": f"u{u}", "item_id": f"i{item}", "timestamp": t})
    items = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(n_items)],
            "title": [f"Movie {i}" for i in range(n_items)],
            "year": [2000] * n_items,
            "genres": [["Drama"]] * n_items,
        }
    )
    return Dataset.from_frames(
        "skew", "movie", pd.DataFrame(rows).drop_duplicates(["user_id", "item_id"]), items
    )


def questions(root: Path, measure: str) -> list[Question]:
    lines = (root / "questions" / f"{measure}.jsonl").read_text().splitlines()
    return [Question.model_validate(json.loads(line)) for line in lines]


# --- the default is untouched ------------------------------------------------------------------------


def test_default_build_is_uniform_and_popularity_changes_only_hit1(tmp_path: Path) -> None:
    data = make_movie_dataset()
    default = build_suite(data, cfg(), tmp_path / "default")
    uniform = build_suite(data, cfg(negatives="uniform"), tmp_path / "uniform")
    popular = build_suite(data, cfg(negatives="popularity"), tmp_path / "popular")
    assert default.config.negatives == "uniform" and popular.config.negatives == "popularity"
    assert default.questions_sha256 == uniform.questions_sha256
    for measure in DRAWN_MEASURES:
        assert popular.questions_sha256[measure] != default.questions_sha256[measure], measure
    # Attribute MCQs have their own knob (``distractors``).
    for measure in ATTRIBUTE_MEASURES:
        assert popular.questions_sha256[measure] == default.questions_sha256[measure], measure


# --- correctness under popularity ----------------------------------------------------------------------


def test_popularity_negatives_still_avoid_every_positive() -> None:
    measures = DRAWN_MEASURES
    ctx, built = build(make_movie_dataset(), cfg(per_measure=25, negatives="popularity", measures=measures))
    for measure in measures:
        assert len(built[measure]) == 25, measure
        for q in built[measure]:
            basic_checks(q)  # unique candidate ids
        reference_check(MEASURES_BY_ID[measure].builder)(ctx, built[measure])  # no negative is a positive


def test_negative_weights_are_interaction_counts() -> None:
    data = make_movie_dataset()
    ctx = BuildContext(data, cfg(negatives="popularity"))
    pairs = data.interactions.drop_duplicates(["user_id", "item_id"])
    items = pairs.groupby("item_id").size()
    users = pairs.groupby("user_id").size()
    pool = np.arange(ctx.n_items)[::3]
    item_w = negative_weights(ctx, "item", pool)
    assert item_w is not None
    assert item_w.tolist() == [float(items[str(ctx.matrix.item_ids[j])]) for j in pool]
    user_w = negative_weights(ctx, "user", np.arange(ctx.n_users))
    assert user_w is not None
    assert user_w.tolist() == [float(users[str(u)]) for u in ctx.matrix.user_ids]
    assert negative_weights(BuildContext(data, cfg()), "item", pool) is None


def test_weighted_draw_is_proportional_among_eligible() -> None:
    gen = rng(2, "weighted")
    pool = np.arange(5)
    weights = np.array([1.0, 2.0, 3.0, 9.0, 0.0])
    counts = np.zeros(5)
    n = 20_000
    for _ in range(n):
        got = draw_distinct(gen, pool, 1, {3}, weights)
        assert got is not None
        counts[got[0]] += 1
    expected = np.array([1.0, 2.0, 3.0, 0.0, 0.0]) / 6.0
    assert np.abs(counts / n - expected).max() < 0.015


# --- the shortcut it removes ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def skew_suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    data = skewed_blocks()
    root = tmp_path_factory.mktemp("skew")
    out: dict[str, Path] = {}
    for negatives in ("uniform", "popularity"):
        out[negatives] = root / negatives
        build_suite(
            data,
            cfg(
                per_measure=100,
                negatives=negatives,
                measures=("assoc_rule", "mem_item_item", "mem_user_user"),
            ),
            out[negatives],
        )
    return out


def _rank_gap(root: Path, measure: str) -> float:
    """|mean popularity rank of negatives - mean rank of positives| (rank 1 = most interactions)."""
    inter = Dataset.load(root / "dataset").interactions
    side = "user_id" if measure == "mem_user_user" else "item_id"
    rank = inter.groupby(side).size().rank(ascending=False)
    qs = questions(root, measure)
    pos = np.mean([rank[q.answer.id] for q in qs])
    neg = np.mean([rank[c.id] for q in qs for i, c in enumerate(q.candidates) if i != q.answer_index])
    return float(abs(neg - pos))


@pytest.mark.parametrize("measure", ["assoc_rule", "mem_item_item", "mem_user_user"])
def test_popularity_negatives_are_closer_in_popularity(skew_suites: dict[str, Path], measure: str) -> None:
    uniform, popular = (
        _rank_gap(skew_suites["uniform"], measure),
        _rank_gap(skew_suites["popularity"], measure),
    )
    assert popular < 0.8 * uniform, (uniform, popular)


def _popularity_accuracy(root: Path, measure: str) -> float:
    baseline = create(ModelSpec("popularity", ""), ModelConfig(suite_dir=root))
    qs = questions(root, measure)
    return float(np.mean([baseline.rank(q)[0] == q.answer_index for q in qs]))


def test_popularity_baseline_loses_its_shortcut_on_assoc_rule(skew_suites: dict[str, Path]) -> None:
    uniform = _popularity_accuracy(skew_suites["uniform"], "assoc_rule")
    popular = _popularity_accuracy(skew_suites["popularity"], "assoc_rule")
    assert uniform >= 0.8  # the shortcut exists on this data
    assert popular <= uniform - 0.1, (uniform, popular)


# --- CLI ---------------------------------------------------------------------------------------------


def test_cli_negatives_option(tmp_path: Path) -> None:
    cache = make_movie_dataset().save(tmp_path / "cache")
    out = tmp_path / "suite"
    args = [
        "build",
        "--dataset",
        str(cache),
        "--out",
        str(out),
        "--per-measure",
        "3",
        "--measures",
        "assoc_rule",
    ]
    ran = run_recworld(*args, "--negatives", "popularity")
    assert ran.returncode == 0, ran.stderr
    assert json.loads((out / "manifest.json").read_text())["config"]["negatives"] == "popularity"
    bad = tmp_path / "bad"
    ran = run_recworld(*args[:3], "--out", str(bad), "--negatives", "nope")
    assert ran.returncode == 2
    assert not bad.exists()
