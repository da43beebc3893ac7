"""The embedding model kind: an :class:`Embedder` turns texts into vectors.

Embedders are named by the same spec strings as chat models (``minilm``,
``st:NAME``, ``openai:MODEL``, a plugin's name), created by
:func:`~recworld.models.registry.load_embedder`, and asked through the same
engine: :class:`recworld.runner.EmbeddingRunner` caches each text's vector in
the run's :class:`~recworld.runner.ResponseCache` under the same key recipe as
a chat request (the embedder's ``identity`` plus
:class:`~recworld.chat.EmbeddingRequest`'s payload), and applies the same
retries, timeouts and failure policy. An embedder raises the same errors as a
chat backend: :class:`~recworld.models.base.TransientModelError` (retried),
:class:`~recworld.errors.ModelError` (this batch failed) and
:class:`~recworld.models.base.FatalModelError` (stop everything).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# Quoted so that naming the type (every embedder, the runner, the options of each command) loads no numpy.
Vectors: TypeAlias = "npt.NDArray[np.float32]"

DEFAULT_BATCH = 64


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one vector per text out. Implementations must be safe to call concurrently."""

    @property
    def identity(self) -> Mapping[str, str]:
        """What names this embedder in the cache key (backend, model, base URL); never secrets."""
        ...

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """A ``(len(texts), dim)`` float32 array, one row per text in order (not necessarily normalised)."""
        ...

    async def aclose(self) -> None:
        """Release connections and memory."""
        ...


class EmbedderBase(ABC):
    """Defaults for an embedder: set ``self._identity``, write :meth:`embed`; ``max_batch`` texts per call."""

    _identity: Mapping[str, str]
    max_batch: int = DEFAULT_BATCH

    @property
    def identity(self) -> Mapping[str, str]:
        return self._identity

    @abstractmethod
    async def embed(self, texts: Sequence[str]) -> Vectors:
        """See :meth:`Embedder.embed`."""

    async def aclose(self) -> None:
        return None


def batch_size(embedder: Embedder) -> int:
    """Texts per call: the embedder's ``max_batch`` when it derives from :class:`EmbedderBase`."""
    return embedder.max_batch if isinstance(embedder, EmbedderBase) else DEFAULT_BATCH


def normalise(vectors: npt.ArrayLike) -> Vectors:
    """Rows scaled to unit L2 norm (a zero row stays zero), as float32: a dot product is then the cosine."""
    import numpy as np

    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    out: Vectors = np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)
    return out
