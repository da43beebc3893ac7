from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from recworld.errors import ConfigError
from recworld.mining import Clusters, kmeans_pick, spherical_kmeans


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
    picks = kmeans_pick(points, n_clusters=5, n_pick=5, seed=0, geometry="euclidean")
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


def test_cosine_geometry_clusters_by_direction_not_norm() -> None:
    """Three directions, each at norms 1 and 50: cosine k-means finds the directions, Euclidean the norms."""
    gen = np.random.default_rng(4)
    directions = np.eye(3)
    points, truth = [], []
    for d in range(3):
        for norm in (1.0, 50.0):
            for _ in range(20):
                points.append(norm * (directions[d] + gen.normal(scale=0.05, size=3)))
                truth.append(d)
    x, labels = np.asarray(points), np.asarray(truth)
    picks = kmeans_pick(x, n_clusters=3, n_pick=3, seed=0)  # cosine is the default
    assert sorted(labels[picks].tolist()) == [0, 1, 2]
    # Each direction's prototype is its most central point by cosine, whatever its norm.
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    for pick in picks:
        members = np.flatnonzero(labels == labels[pick])
        centre = unit[members].mean(axis=0)
        cosines = unit[members] @ (centre / np.linalg.norm(centre))
        assert members[np.argmax(cosines)] == pick
    with pytest.raises(ConfigError):
        kmeans_pick(x, geometry="manhattan")  # type: ignore[arg-type]


def _brute_assignment_holds(x: np.ndarray, found: Clusters) -> None:
    """Each row's label is a centre of highest cosine, and its distance is 1 - that cosine (plain loops)."""
    for row, label, distance in zip(x.tolist(), found.labels.tolist(), found.distance.tolist(), strict=True):
        norm = math.sqrt(sum(v * v for v in row)) or 1.0
        cosines = [sum(a * b for a, b in zip(row, c, strict=True)) / norm for c in found.centres.tolist()]
        assert cosines[label] >= max(cosines) - 1e-9
        assert math.isclose(distance, 1.0 - cosines[label], abs_tol=1e-9)


def _reference_deal(labels: np.ndarray, distance: np.ndarray, k: int, n: int) -> list[int]:
    """Round-robin over clusters 0..k-1, each nearest first (ties by index): written apart from _deal."""
    queues = [sorted((d, i) for i, (lab, d) in enumerate(zip(labels, distance, strict=True)) if lab == c)
              for c in range(k)]  # fmt: skip
    out: list[int] = []
    for depth in range(max((len(q) for q in queues), default=0)):
        out += [q[depth][1] for q in queues if depth < len(q)]
    return out[:n]


_SMALL = st.integers(2, 5).flatmap(
    lambda d: hnp.arrays(np.float64, st.tuples(st.integers(1, 40), st.just(d)), elements=st.integers(-6, 6))
)


@settings(max_examples=40, deadline=None)
@given(x=_SMALL, k=st.integers(1, 6), seed=st.integers(0, 2**40), sample=st.none() | st.integers(1, 30))
def test_spherical_kmeans_assigns_by_cosine_and_kmeans_pick_deals_its_clusters(
    x: np.ndarray, k: int, seed: int, sample: int | None
) -> None:
    found = spherical_kmeans(x, k, seed, fit_sample=sample)
    assert found.labels.shape == (len(x),) and 1 <= found.k <= k
    assert found.centres.shape == (found.k, x.shape[1])
    assert set(found.labels.tolist()) <= set(range(found.k))
    _brute_assignment_holds(x, found)
    again = spherical_kmeans(x, k, seed, fit_sample=sample)
    assert np.array_equal(again.labels, found.labels) and np.array_equal(again.centres, found.centres)
    # The build's targets are a deal over exactly these clusters (same seed, same fit sample).
    picks = kmeans_pick(x, k, len(x), seed, fit_sample=sample)
    assert picks.tolist() == _reference_deal(found.labels, found.distance, found.k, len(x))


def test_spherical_kmeans_finds_planted_directions_whatever_the_norms() -> None:
    """Three well-separated directions at norms from 0.1 to 50: one cluster per direction."""
    gen = np.random.default_rng(5)
    truth = np.repeat(np.arange(3), 15)
    x = np.eye(3)[truth] * gen.uniform(0.1, 50.0, size=(45, 1)) + gen.normal(scale=0.01, size=(45, 3))
    labels = spherical_kmeans(x, 3, seed=9).labels
    assert {(int(t), int(lab)) for t, lab in zip(truth, labels, strict=True)} == {
        (t, int(labels[truth == t][0])) for t in range(3)
    }
    assert len(set(labels.tolist())) == 3
