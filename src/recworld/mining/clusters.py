"""Diverse, representative targets for the neural-embedding measures.

LRWorld takes its neu_* targets from the prototypes of k-means clusters over
the embeddings. We cluster, order each cluster's members by distance to their
centroid (nearest first, ties by index), and deal targets round-robin across
clusters: the first pick of every cluster is its prototype, then the second
nearest of each, and so on. Every cluster is covered before any is used twice.
"""

from __future__ import annotations

import numpy as np

from recworld.errors import ConfigError
from recworld.seeding import child_seed

KMEANS_N_INIT = 4  # fixed so the result never depends on a library default


def kmeans_pick(embeddings: np.ndarray, n_clusters: int = 10, n_pick: int = 10, seed: int = 0) -> np.ndarray:
    """Indices of ``n_pick`` targets drawn round-robin across k-means clusters (deterministic).

    Returns at most ``len(embeddings)`` indices; fewer distinct points than
    ``n_clusters`` shrink the number of clusters rather than fail.
    """
    from sklearn.cluster import KMeans

    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise ConfigError(f"kmeans_pick needs a non-empty 2-D embedding array, got shape {x.shape}")
    if n_clusters < 1 or n_pick < 0:
        raise ConfigError(f"n_clusters must be >= 1 and n_pick >= 0, got {n_clusters}, {n_pick}")
    distinct = len(np.unique(x, axis=0))
    clusters = min(n_clusters, distinct)
    model = KMeans(
        n_clusters=clusters,
        n_init=KMEANS_N_INIT,
        random_state=child_seed(seed, "mining", "kmeans") % 2**32,
    )
    labels = model.fit_predict(x)
    distance = np.linalg.norm(x - model.cluster_centers_[labels], axis=1)
    queues: list[np.ndarray] = []
    for label in range(clusters):
        members = np.flatnonzero(labels == label)
        queues.append(members[np.lexsort((members, distance[members]))])
    picks: list[int] = []
    depth = 0
    target = min(n_pick, x.shape[0])
    while len(picks) < target:
        for queue in queues:
            if depth < len(queue) and len(picks) < target:
                picks.append(int(queue[depth]))
        depth += 1
    return np.asarray(picks, dtype=np.int64)
