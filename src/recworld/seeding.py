"""Every random choice in RecWorld derives from one integer seed.

Components never share a generator: each asks for a child generator keyed by
stable names (``rng(seed, "build", "mem_item_item")``), so adding a measure or
reordering work never changes the draws another component sees.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads on the first draw: every command's options import this module
    import numpy as np


def _key_words(keys: tuple[str | int, ...]) -> list[int]:
    words: list[int] = []
    for key in keys:
        digest = hashlib.blake2b(str(key).encode("utf-8"), digest_size=8).digest()
        words.append(int.from_bytes(digest, "little"))
    return words


def seed_sequence(seed: int, *keys: str | int) -> np.random.SeedSequence:
    """A :class:`numpy.random.SeedSequence` for ``seed`` and a path of names."""
    import numpy as np

    return np.random.SeedSequence(entropy=seed, spawn_key=tuple(_key_words(keys)))


def rng(seed: int, *keys: str | int) -> np.random.Generator:
    """An independent PCG64 generator for one named component."""
    import numpy as np

    return np.random.Generator(np.random.PCG64(seed_sequence(seed, *keys)))


def child_seed(seed: int, *keys: str | int) -> int:
    """A 63-bit integer seed for libraries that take an int (torch, sklearn)."""
    import numpy as np

    state = seed_sequence(seed, *keys).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1])) & ((1 << 63) - 1)
