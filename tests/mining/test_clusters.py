from __future__ import annotations

import numpy as np
import pytest

from recworld.errors import ConfigError
from recworld.mining import kmeans_pick


def _blobs(seed: int = 0, per: int = 20, n_centres: int = 5) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    centres = gen.normal(scale=20.0, size=(n_centres, 4))
    labels = np.repeat(np.arange(n_centres), per)
    return centres[labels] + gen.normal(scale=0.5, size=(len(labels), 4)), labels


def test_same_seed_same_picks_and_other_seed_runs() -> None:
    points, _ = _blobs()
    first = kmeans_pick(points, n_clusters=5, n_pick=12, seed=3)
    assert np.array_equal(first, kmeans_pick(points, n_clusters=5, n_pick=12, seed=3))
    assert len(set(first.tolist())) == 12
    assert first.dtype == np.int64


def test_round_robin_covers_every_cluster_first() -> None:
    points, truth = _blobs()
    picks = kmeans_pick(points, n_clusters=5, n_pick=10, seed=0)
    # Well separated blobs: the first 5 picks hit 5 different true clusters, and so do the next 5.
    assert sorted(truth[picks[:5]].tolist()) == [0, 1, 2, 3, 4]
    assert sorted(truth[picks[5:]].tolist()) == [0, 1, 2, 3, 4]


def test_first_pick_per_cluster_is_nearest_to_its_centroid() -> None:
    points, truth = _blobs(seed=1)
    picks = kmeans_pick(points, n_clusters=5, n_pick=5, seed=0)
    for pick in picks:
        members = np.flatnonzero(truth == truth[pick])
        centre = points[members].mean(axis=0)
        distances = np.linalg.norm(points[members] - centre, axis=1)
        assert members[np.argmin(distances)] == pick


def test_small_inputs() -> None:
    points = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    picks = kmeans_pick(points, n_clusters=10, n_pick=10, seed=0)
    assert sorted(picks.tolist()) == [0, 1, 2]
    with pytest.raises(ConfigError):
        kmeans_pick(np.zeros((0, 2)), n_pick=1)


def test_fit_sample_assigns_every_point_and_keeps_whole_fits_unchanged() -> None:
    points, truth = _blobs(seed=2, per=40)
    whole = kmeans_pick(points, n_clusters=5, n_pick=20, seed=1, fit_sample=None)
    assert np.array_equal(whole, kmeans_pick(points, n_clusters=5, n_pick=20, seed=1, fit_sample=len(points)))
    sampled = kmeans_pick(points, n_clusters=5, n_pick=200, seed=1, fit_sample=25)
    # Fitted on 25 of 200 points, yet every point is assigned and picked.
    assert sorted(sampled.tolist()) == list(range(200))
    assert sorted(truth[sampled[:5]].tolist()) == [0, 1, 2, 3, 4]
    assert np.array_equal(sampled, kmeans_pick(points, n_clusters=5, n_pick=200, seed=1, fit_sample=25))
    with pytest.raises(ConfigError):
        kmeans_pick(points, fit_sample=0)
