"""The NeuMF space a suite's neural measures were built from, saved beside the questions.

The neural ground truth is a cosine in a trained embedding space that cannot
be recomputed cheaply or bit-exactly, so a build that trains NeuMF keeps the
two tables it ranked with (float32, the precision retrieval used) in
``SUITE/neumf/`` as plain ``.npy`` files (no pickle, byte-reproducible), with
the user and item ids of their rows. The ``oracle`` baseline reads them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from recworld.errors import DataError

FOLDER = "neumf"
_FILES = ("user", "item", "user_ids", "item_ids")


@dataclass(frozen=True)
class SavedSpace:
    """User and item vectors with the ids of their rows."""

    user: np.ndarray
    item: np.ndarray
    user_ids: np.ndarray
    item_ids: np.ndarray


def save_space(folder: Path, space: SavedSpace) -> None:
    folder.mkdir()
    np.save(folder / "user.npy", np.ascontiguousarray(space.user, dtype=np.float32))
    np.save(folder / "item.npy", np.ascontiguousarray(space.item, dtype=np.float32))
    np.save(folder / "user_ids.npy", np.asarray(space.user_ids).astype(str))
    np.save(folder / "item_ids.npy", np.asarray(space.item_ids).astype(str))


def load_space(suite_dir: Path) -> SavedSpace:
    """The saved space of a suite; a suite built without neural measures has none (DataError)."""
    folder = Path(suite_dir) / FOLDER
    arrays: dict[str, np.ndarray] = {}
    for name in _FILES:
        path = folder / f"{name}.npy"
        try:
            arrays[name] = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise DataError(
                "no saved NeuMF space: was the suite built with neural measures?", path=path
            ) from None
        except ValueError as exc:
            raise DataError(f"unreadable NeuMF table ({exc})", path=path) from None
    space = SavedSpace(**arrays)
    if len(space.user) != len(space.user_ids) or len(space.item) != len(space.item_ids):
        raise DataError("NeuMF tables and their ids differ in length", path=folder)
    return space
