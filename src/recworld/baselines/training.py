"""The fitted state the data baselines read: one suite's interaction matrix and item attributes.

Fitted once per process and suite directory (a suite rebuilt in place is
refitted), and shared by every baseline that answers from that suite.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from recworld.data.dataset import Dataset
from recworld.errors import ModelError
from recworld.mining import InteractionMatrix


@dataclass
class TrainingData:
    """The binary interaction matrix and item attributes of one suite, fitted once."""

    fingerprint: str
    matrix: sp.csr_matrix  # users x items, binary float64
    by_item: sp.csr_matrix  # items x users (the transpose, CSR for row slicing)
    user_index: dict[str, int]
    item_index: dict[str, int]
    user_sq: np.ndarray  # squared norms = interaction counts
    item_sq: np.ndarray
    items: Any  # pandas frame of item attributes, indexed by item_id
    _values: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    _global: dict[str, Counter[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_dataset(cls, dataset: Dataset) -> TrainingData:
        m = InteractionMatrix.from_interactions(dataset.interactions)
        matrix = sp.csr_matrix(m.matrix, dtype=np.float64)
        return cls(
            fingerprint=dataset.fingerprint(),
            matrix=matrix,
            by_item=sp.csr_matrix(matrix.T),
            user_index=m.user_index(),
            item_index=m.item_index(),
            user_sq=np.asarray(matrix.sum(axis=1)).ravel(),
            item_sq=np.asarray(matrix.sum(axis=0)).ravel(),
            items=dataset.items.set_index("item_id", drop=False),
        )

    def item_cols(self, ids: Sequence[str]) -> np.ndarray:
        """Matrix columns of the known ids among ``ids`` (unknown ids are dropped)."""
        return np.array([self.item_index[i] for i in ids if i in self.item_index], dtype=np.int64)

    def user_history(self, user_id: str) -> np.ndarray:
        row = self.user_index.get(user_id)
        if row is None:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self.matrix.indices[self.matrix.indptr[row] : self.matrix.indptr[row + 1]])

    def values(self, name: str) -> list[tuple[str, ...]]:
        """Per item column, the values of item field ``name`` (a list field gives several)."""
        with self._lock:
            if name not in self._values:
                if name not in self.items.columns:
                    raise ModelError(f"the suite's dataset has no item field {name!r}")
                column = self.items[name]
                out: list[tuple[str, ...]] = []
                for item_id in sorted(self.item_index, key=self.item_index.__getitem__):
                    out.append(as_values(column.get(item_id)) if item_id in column.index else ())
                self._values[name] = out
                self._global[name] = Counter(v for value in column for v in as_values(value))
            return self._values[name]

    def global_counts(self, name: str) -> Counter[str]:
        """How many catalogue items carry each value of field ``name``."""
        self.values(name)
        return self._global[name]


def as_values(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(str(v) for v in value if v is not None and str(v) != "")
    try:
        if bool(np.isnan(value)):
            return ()
    except TypeError:
        pass
    return (str(value),)


_STATES: dict[tuple[Path, int], TrainingData] = {}
_STATES_LOCK = threading.Lock()


def training_data(suite_dir: Path) -> TrainingData:
    """The fitted state of a suite, loaded once per process and directory.

    The key includes the dataset's modification time, so a suite rebuilt in
    place is refitted rather than answered from stale state.
    """
    root = Path(suite_dir).resolve()
    meta = root / "dataset" / "dataset.json"
    key = (root, meta.stat().st_mtime_ns if meta.exists() else 0)
    with _STATES_LOCK:
        if key not in _STATES:
            _STATES[key] = TrainingData.from_dataset(Dataset.load(root / "dataset"))
        return _STATES[key]
