"""The t-SNE view of a suite's NeuMF space (paper Fig. 8): clusters in the geometry retrieval uses.

The suite keeps the space its neural answers were retrieved in (``SUITE/neumf/``,
:mod:`recworld.lrworld.embeddings`) and its build settings (``manifest.json``).
This module reads both and draws each side (items, users) on its own, as the
paper's Fig. 8 does, coloured by k-means clusters. The answers are cosines, so
the clusters are spherical: :func:`recworld.mining.spherical_kmeans`, the one
the build's own target clusters come from (rows scaled to unit length, k-means
on them, each vector joining the centroid direction of highest cosine), with
the figure's own number of clusters and seed. The
paper draws 5 clusters for readability while its evaluation uses 10; the
default here is the figure's 5.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from recworld.errors import DataError
from recworld.lrworld.manifest import read_manifest
from recworld.mining.clusters import spherical_kmeans, unit_rows
from recworld.seeding import rng

__all__ = ["TSNE_POINTS", "BuildSettings", "Panel", "build_settings", "embedding_panel"]

# t-SNE on more points than this per side is slow on a laptop and unreadable on a page.
TSNE_POINTS = 600


@dataclass(frozen=True)
class BuildSettings:
    """What the view reads from the suite's manifest: the build seed and its number of target clusters."""

    seed: int
    clusters: int | str


def build_settings(suite: Path) -> BuildSettings:
    try:
        manifest = read_manifest(suite)
    except DataError:
        return BuildSettings(seed=0, clusters="(unknown: no readable manifest)")
    return BuildSettings(seed=manifest.seed, clusters=manifest.config.kmeans_clusters)


@dataclass(frozen=True)
class Panel:
    """One side of the figure: t-SNE points by cluster, the question targets, and cluster counts."""

    k: int
    groups: list[tuple[int, np.ndarray, np.ndarray]]  # (cluster, xs, ys)
    target_xy: tuple[np.ndarray, np.ndarray]
    counts: list[tuple[int, int, int, int]]  # (cluster, members, shown, targets)


def embedding_panel(vectors: np.ndarray, ids: np.ndarray, targets: set[str], k: int, seed: int) -> Panel:
    """Cluster a whole side, then lay out every target and a seeded sample of the rest with t-SNE."""
    from sklearn.manifold import TSNE

    x = np.asarray(vectors, dtype=np.float64)
    labels = spherical_kmeans(x, k, seed).labels  # fitted on at most 20k vectors, all assigned
    is_target = np.array([str(i) in targets for i in ids], dtype=bool)
    chosen = _shown(is_target, seed)
    points = unit_rows(x[chosen])
    # t-SNE's PCA start divides by the spread: points all alike give NaNs, and sklearn 1.x then segfaults.
    if len(points) > 3 and len(np.unique(points, axis=0)) > 1:
        from threadpoolctl import threadpool_limits

        perplexity = min(30.0, (len(points) - 1) / 3)
        tsne = TSNE(n_components=2, perplexity=perplexity, random_state=seed % (2**32), init="pca")
        with threadpool_limits(limits=1):  # 30x faster than OpenMP's spin on 2 shared cores (measured)
            xy = tsne.fit_transform(points)
    else:
        xy = np.zeros((len(points), 2))
    shown_labels, shown_target = labels[chosen], is_target[chosen]
    clusters = sorted(set(labels.tolist()))
    groups = [(c, xy[shown_labels == c, 0], xy[shown_labels == c, 1]) for c in clusters]
    counts = [
        (c, int((labels == c).sum()), int((shown_labels == c).sum()), int((is_target & (labels == c)).sum()))
        for c in clusters
    ]
    return Panel(len(clusters), groups, (xy[shown_target, 0], xy[shown_target, 1]), counts)


def _shown(is_target: np.ndarray, seed: int) -> np.ndarray:
    """Row indices drawn: every target (up to the limit), then a seeded sample of the others."""
    targets = np.flatnonzero(is_target)[:TSNE_POINTS]
    others = np.flatnonzero(~is_target)
    room = max(0, TSNE_POINTS - len(targets))
    sample = rng(seed, "shown").permutation(others)[:room]
    return np.sort(np.concatenate([targets, sample])).astype(np.int64)
