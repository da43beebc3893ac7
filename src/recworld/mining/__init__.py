"""Ground-truth signals mined from interactions: pair rules, cosine neighbours, NeuMF, k-means targets.

Everything works on the binary :class:`InteractionMatrix`; indices in results
are its rows (users) and columns (items). Torch and scikit-learn are imported
only when NeuMF or k-means run.
"""

from recworld.mining.clusters import Clusters, kmeans_pick, spherical_kmeans
from recworld.mining.matrix import InteractionMatrix
from recworld.mining.neumf import NeuMFConfig, NeuMFEmbeddings, train_neumf
from recworld.mining.rules import RuleTable, mine_pair_rules
from recworld.mining.similarity import Neighbours, cosine_topk, dense_cosine_topk

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
