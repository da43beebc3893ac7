"""Diverse, representative targets for the neural-embedding measures.

LRWorld takes its neu_* targets from the prototypes of k-means clusters over
the embeddings. We cluster, order each cluster's members by distance to their
centroid (nearest first, ties by index), and deal targets round-robin across
clusters: the first pick of every cluster is its prototype, then the second
nearest of each, and so on. Every cluster is covered before any is used twice.

Geometry. The neu_* ground truth is a cosine, so by default the clusters are
*spherical* (``geometry="cosine"``): rows are scaled to unit length before
k-means, each point joins the centroid direction it has the highest cosine
with, and "nearest" means the highest cosine (:func:`spherical_kmeans`, which
the report's t-SNE colours use too). Euclidean k-means on raw
vectors (``geometry="euclidean"``) would group by vector norm as much as by
direction, which retrieval never sees.

Cost. k-means runs on one thread and is fitted on at most ``fit_sample``
points (a seeded sample; every point is then assigned to its nearest
centroid). sklearn's Lloyd loop is OpenMP-parallel; on the shared 2-core box
its threads spin against other jobs, and 40k x 32 points took 12 s on 2
threads against 2.3 s on 1 (and 0.9 s for a 20k sample). Centroids of 10
clusters are estimated just as well from 20k points as from 160k, and the
picks still come from every point, so ML-25M-sized embeddings cost the same
as ML-1M-sized ones. Inputs of at most ``fit_sample`` points are fitted
whole, exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from recworld.errors import ConfigError
from recworld.seeding import child_seed, rng

Geometry = Literal["cosine", "euclidean"]

KMEANS_N_INIT = 4  # fixed so the result never depends on a library default
KMEANS_FIT_SAMPLE = 20_000  # points k-means is fitted on; larger inputs are sampled, then all assigned


@dataclass(frozen=True)
class Clusters:
    """Every row's cluster and its distance to that cluster's centre (1 - cosine when spherical)."""

    labels: np.ndarray  # int64, one per row, in range(k); a cluster may end up with no row
    distance: np.ndarray  # float64, one per row
    centres: np.ndarray  # (k, columns): unit directions when spherical
    k: int  # clusters fitted: fewer than asked when the fit has fewer distinct rows


def spherical_kmeans(
    x: np.ndarray, k: int, seed: int = 0, fit_sample: int | None = KMEANS_FIT_SAMPLE
) -> Clusters:
    """k-means on the unit rows of ``x``, each row assigned to the centroid direction of highest cosine.

    The one spherical k-means: the neural builder's targets (:func:`kmeans_pick`) and the
    report's t-SNE colours both come from it, so one seed gives one clustering. Deterministic
    in ``seed``; at most ``fit_sample`` rows (None: all) fit the centroids, all are assigned.
    """
    return _kmeans(x, k, seed, fit_sample, "cosine")


def kmeans_pick(
    embeddings: np.ndarray,
    n_clusters: int = 10,
    n_pick: int = 10,
    seed: int = 0,
    *,
    fit_sample: int | None = KMEANS_FIT_SAMPLE,
    geometry: Geometry = "cosine",
) -> np.ndarray:
    """Indices of ``n_pick`` targets drawn round-robin across k-means clusters (deterministic).

    Returns at most ``len(embeddings)`` indices; fewer distinct points than
    ``n_clusters`` shrink the number of clusters rather than fail. More than
    ``fit_sample`` points (``None``: no limit): the centroids are fitted on a
    seeded sample of that many, then every point is assigned and may be picked.
    ``geometry`` is the one retrieval uses (see the module docstring); the cosine
    clusters are :func:`spherical_kmeans`'s.
    """
    if n_pick < 0:
        raise ConfigError(f"n_pick must be >= 0, got {n_pick}")
    if geometry not in ("cosine", "euclidean"):
        raise ConfigError(f"geometry must be 'cosine' or 'euclidean', got {geometry!r}")
    found = _kmeans(embeddings, n_clusters, seed, fit_sample, geometry)
    return _deal(found.labels, found.distance, found.k, min(n_pick, len(found.labels)))


def _kmeans(x: np.ndarray, k: int, seed: int, fit_sample: int | None, geometry: Geometry) -> Clusters:
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ConfigError(f"k-means needs a non-empty 2-D embedding array, got shape {x.shape}")
    if k < 1:
        raise ConfigError(f"n_clusters must be >= 1, got {k}")
    if fit_sample is not None and fit_sample < 1:
        raise ConfigError(f"fit_sample must be >= 1 or None, got {fit_sample}")
    if geometry == "cosine":
        x = unit_rows(x)
    sampled = fit_sample is not None and x.shape[0] > fit_sample
    fit_x = x
    if sampled:
        chosen = rng(seed, "mining", "kmeans", "sample").choice(x.shape[0], size=fit_sample, replace=False)
        fit_x = x[np.sort(chosen)]
    clusters = min(k, len(np.unique(fit_x, axis=0)))
    model = KMeans(
        n_clusters=clusters,
        n_init=KMEANS_N_INIT,
        random_state=child_seed(seed, "mining", "kmeans") % 2**32,
    )
    # One thread: see the module docstring (OpenMP spin under contention costs 5x).
    with threadpool_limits(limits=1):
        labels = model.fit(fit_x).predict(x) if sampled else model.fit_predict(x)
    centres = np.asarray(model.cluster_centers_, dtype=np.float64)
    if geometry == "cosine":
        # Spherical assignment: the centroid direction of highest cosine; distance 1 - cosine.
        centres = unit_rows(centres)
        similarity = x @ centres.T
        labels = np.argmax(similarity, axis=1)
        distance = 1.0 - similarity[np.arange(len(x)), labels]
    else:
        distance = np.linalg.norm(x - centres[labels], axis=1)
    labels = np.asarray(labels, dtype=np.int64)
    return Clusters(labels, np.asarray(distance, dtype=np.float64), centres, clusters)


def _deal(labels: np.ndarray, distance: np.ndarray, clusters: int, target: int) -> np.ndarray:
    """Round-robin over clusters, each in order of distance to its centroid (ties by index)."""
    queues: list[np.ndarray] = []
    for label in range(clusters):
        members = np.flatnonzero(labels == label)
        queues.append(members[np.lexsort((members, distance[members]))])
    picks: list[int] = []
    depth = 0
    while len(picks) < target:
        for queue in queues:
            if depth < len(queue) and len(picks) < target:
                picks.append(int(queue[depth]))
        depth += 1
    return np.asarray(picks, dtype=np.int64)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.asarray(x / np.where(norms > 0, norms, 1.0), dtype=np.float64)
