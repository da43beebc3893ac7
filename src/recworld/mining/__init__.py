"""Ground-truth signals mined from interactions: pair rules, cosine neighbours, NeuMF, k-means targets.

Everything works on the binary :class:`InteractionMatrix`; indices in results
are its rows (users) and columns (items). Torch and scikit-learn are imported
only when NeuMF or k-means run.

Every name loads its module on first use (module ``__getattr__``, Scientific Python's SPEC 1),
so holding a :class:`NeuMFConfig` (every build config, so every command's options) costs no
numpy or scipy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recworld.lazy import attach

if TYPE_CHECKING:
    from recworld.mining.clusters import Clusters, kmeans_pick, spherical_kmeans
    from recworld.mining.matrix import InteractionMatrix
    from recworld.mining.neumf import NeuMFEmbeddings, train_neumf
    from recworld.mining.neumf_config import NeuMFConfig
    from recworld.mining.rules import RuleTable, mine_pair_rules
    from recworld.mining.similarity import Neighbours, cosine_topk, dense_cosine_topk

# Public names that load their module (and its heavy imports) when first asked for.
_ON_FIRST_USE = {
    "Clusters": "recworld.mining.clusters",
    "kmeans_pick": "recworld.mining.clusters",
    "spherical_kmeans": "recworld.mining.clusters",
    "InteractionMatrix": "recworld.mining.matrix",
    "NeuMFEmbeddings": "recworld.mining.neumf",
    "train_neumf": "recworld.mining.neumf",
    "NeuMFConfig": "recworld.mining.neumf_config",
    "RuleTable": "recworld.mining.rules",
    "mine_pair_rules": "recworld.mining.rules",
    "Neighbours": "recworld.mining.similarity",
    "cosine_topk": "recworld.mining.similarity",
    "dense_cosine_topk": "recworld.mining.similarity",
}


__getattr__, __dir__ = attach(__name__, _ON_FIRST_USE)


__all__ = [
    "Clusters",
    "InteractionMatrix",
    "Neighbours",
    "NeuMFConfig",
    "NeuMFEmbeddings",
    "RuleTable",
    "cosine_topk",
    "dense_cosine_topk",
    "kmeans_pick",
    "mine_pair_rules",
    "spherical_kmeans",
    "train_neumf",
]
