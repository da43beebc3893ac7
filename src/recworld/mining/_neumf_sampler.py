"""Which positives NeuMF trains on each epoch: every one, or a budget with a floor per user and per item.

Why floors. Embedding rows start at random and cosine ignores their norm, so a
user or item that never receives a gradient keeps a random direction and still
takes part in k-means and retrieval. A uniform sample of a large log misses
light users often (an ML-25M user with 20 ratings was never drawn with
probability ~45 % under the old 200k-positive cap). Here every user
contributes ``min(degree, user_floor)`` of its positives to every epoch, and
every item ``min(degree, item_floor)``; the rest of the budget is filled
uniformly. Each positive also brings ``negatives`` sampled items for the same
user, so a user row gets ``(1 + negatives) * floor`` updates per epoch at least.

The floor positions of a group (a user's positives, or an item's) are a window
of consecutive entries starting at a fresh random offset each epoch, wrapping
around. Every positive thus has the same chance ``floor / degree`` to be in a
window, and no sort of the whole log is needed (100M positives at Netflix size).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class Positives:
    """Training positives in (user, item) order, with the pointers the floors need.

    ``by_item`` lists positive indices in item-major order and ``item_ptr``
    delimits each item's run in it; ``keys`` (``user * n_items + item``, sorted)
    let negatives be checked against observed pairs.
    """

    users: np.ndarray  # (n,) int32
    items: np.ndarray  # (n,) int32
    user_ptr: np.ndarray  # (n_users + 1,) int64
    by_item: np.ndarray  # (n,) int64
    item_ptr: np.ndarray  # (n_items + 1,) int64
    keys: np.ndarray  # (n,) int64, sorted
    n_items: int

    @classmethod
    def from_train(cls, train: sp.csr_matrix) -> Positives:
        x = sp.csr_matrix(train)
        x.sort_indices()
        n_users, n_items = x.shape
        user_ptr = x.indptr.astype(np.int64)
        users = np.repeat(np.arange(n_users, dtype=np.int32), np.diff(user_ptr))
        items = x.indices.astype(np.int32)
        # Counting-sort to item-major order through scipy (O(nnz)); +1 keeps index 0 a stored value.
        order = sp.csr_matrix((np.arange(1, x.nnz + 1, dtype=np.int64), x.indices, x.indptr), shape=x.shape)
        csc = order.tocsc()
        csc.sort_indices()
        keys = users.astype(np.int64) * n_items + items
        return cls(users, items, user_ptr, csc.data - 1, csc.indptr.astype(np.int64), keys, n_items)

    def __len__(self) -> int:
        return len(self.users)


def floor_positions(ptr: np.ndarray, floor: int, gen: np.random.Generator) -> np.ndarray:
    """Per group ``ptr[g]:ptr[g+1]``: ``min(size, floor)`` consecutive entries from a random start."""
    size = np.diff(ptr)
    offset = (gen.random(len(size)) * size).astype(np.int64)
    take = np.minimum(size, floor)
    group = np.repeat(np.arange(len(size)), take)
    step = np.arange(int(take.sum()), dtype=np.int64) - np.repeat(np.cumsum(take) - take, take)
    return np.asarray(ptr[group] + (offset[group] + step) % size[group], dtype=np.int64)


def epoch_positives(
    pos: Positives, budget: int | None, user_floor: int, item_floor: int, gen: np.random.Generator
) -> np.ndarray:
    """Sorted indices of this epoch's positives: all of them when the budget allows, else floors + a fill.

    The floors always hold, so an epoch may exceed ``budget`` when they alone do.
    """
    n = len(pos)
    if budget is None or budget >= n:
        return np.arange(n, dtype=np.int64)
    chosen = np.zeros(n, dtype=bool)
    chosen[floor_positions(pos.user_ptr, user_floor, gen)] = True
    chosen[pos.by_item[floor_positions(pos.item_ptr, item_floor, gen)]] = True
    n_floor = int(chosen.sum())
    if budget > n_floor:
        rate = (budget - n_floor) / (n - n_floor)
        chosen |= gen.random(n, dtype=np.float32) < rate
    return np.flatnonzero(chosen)


def _contains(sorted_keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    at = np.minimum(np.searchsorted(sorted_keys, queries), len(sorted_keys) - 1)
    return np.asarray(sorted_keys[at] == queries)


def epoch_examples(
    pos: Positives,
    chosen: np.ndarray,
    negatives: int,
    gen: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shuffled (user, item, label) arrays: the chosen positives, each with ``negatives`` fresh negatives."""
    pos_u = pos.users[chosen].astype(np.int64)
    pos_i = pos.items[chosen].astype(np.int64)
    neg_u = np.repeat(pos_u, negatives)
    neg_i = gen.integers(0, pos.n_items, size=len(neg_u))
    for _ in range(3):  # redraw the few negatives that hit an observed pair
        clash = np.flatnonzero(_contains(pos.keys, neg_u * pos.n_items + neg_i))
        if len(clash) == 0:
            break
        neg_i[clash] = gen.integers(0, pos.n_items, size=len(clash))
    all_u = np.concatenate([pos_u, neg_u])
    all_i = np.concatenate([pos_i, neg_i])
    labels = np.concatenate([np.ones(len(pos_u), np.float32), np.zeros(len(neg_u), np.float32)])
    order = gen.permutation(len(all_u))
    return all_u[order], all_i[order], labels[order]
