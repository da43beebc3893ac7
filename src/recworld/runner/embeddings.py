"""The embedding road: texts in, vectors out, with the chat road's cache, key, retries and failure policy.

An :class:`EmbeddingRunner` wraps an :class:`~recworld.models.embedding.Embedder`.
Each text is one cache entry in the run's :class:`~recworld.runner.ResponseCache`,
keyed by the chat recipe (:func:`~recworld.runner.cache.cache_key` of the
embedder's identity and :class:`~recworld.chat.EmbeddingRequest`), so a text
embedded once, in any batch, by any stage, is never embedded again. Texts not
in the cache, and not already being embedded by another call (coalescing),
are sent in batches of the embedder's ``max_batch``, concurrently up to
``RunnerConfig.concurrency``, through the same
:class:`~recworld.runner.sending.Sender` a chat runner uses: per-attempt
timeout, retries with jittered back-off, a batch that fails for good is a
:class:`~recworld.errors.ModelError`, a fatal failure (401/403/404, an
unreachable server) a :class:`~recworld.models.base.FatalModelError` that
stops the runner.

Vectors are cached as the embedder returned them (float32, base64) and handed
back L2-normalised by default, so a dot product is the cosine.
:class:`BlockingEmbedder` serves synchronous callers.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import threading
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import Future as ThreadFuture
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from recworld.chat import EmbeddingRequest
from recworld.errors import ModelError
from recworld.models.base import FatalModelError
from recworld.models.embedding import Embedder, Vectors, batch_size, normalise
from recworld.runner.cache import CacheKeyer, ResponseCache
from recworld.runner.config import RunnerConfig, RunnerStats
from recworld.runner.sending import Sender

Vector = npt.NDArray[np.float32]
T = TypeVar("T")

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Result:
    vector: Vector | None
    error: str | None = None
    fatal: bool = False


def encode_vector(vector: Vector) -> dict[str, Any]:
    """A vector as a cache document: its length and its little-endian float32 bytes in base64."""
    data = np.asarray(vector, dtype="<f4").tobytes()
    return {"dim": len(vector), "vector_f32": base64.b64encode(data).decode("ascii")}


def decode_vector(document: Mapping[str, Any]) -> Vector | None:
    """The vector of a cache document; None when the document is not a whole, finite vector."""
    try:
        raw = base64.b64decode(str(document["vector_f32"]), validate=True)
        vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        dim = int(document["dim"])
    except (KeyError, TypeError, ValueError):
        return None
    if dim <= 0 or len(vector) != dim or not np.isfinite(vector).all():
        return None
    return vector


class EmbeddingRunner:
    """Embeds texts through one embedder; safe to share across asyncio tasks of one loop.

    The runner owns ``embedder`` (``aclose`` closes it) unless ``owns_embedder``
    is False: an embedder a caller handed over stays the caller's, open. A
    ``cache`` may be shared with other runners and is closed by whoever opened
    it. Open one with :func:`recworld.runner.open_embedding_runner`.
    """

    def __init__(
        self,
        embedder: Embedder,
        config: RunnerConfig | None = None,
        cache: ResponseCache | None = None,
        *,
        batch: int | None = None,
        owns_embedder: bool = True,
    ) -> None:
        self.embedder = embedder
        self.owns_embedder = owns_embedder
        self.config = config or RunnerConfig()
        self.cache = cache
        self.stats = RunnerStats()
        self.batch = batch or batch_size(embedder)
        self._key = CacheKeyer(embedder.identity)
        self._sender = Sender(self.config, self.stats, self.config.concurrency)
        self._inflight: dict[str, asyncio.Future[_Result | None]] = {}

    @property
    def identity(self) -> Mapping[str, str]:
        return self.embedder.identity

    @property
    def stopped(self) -> str | None:
        """Why this runner stopped sending (a fatal failure), or None while it still sends."""
        return self._sender.stopped

    async def embed(self, texts: Sequence[str], *, normalised: bool = True) -> Vectors:
        """One row per text, in order: L2-normalised unless ``normalised=False``."""
        self.stats.requests += len(texts)
        keys = [self._key(EmbeddingRequest(text)) for text in texts]
        text_of = dict(zip(keys, texts, strict=True))
        found: dict[str, Vector] = {}
        for key in text_of:
            vector = self._cached(key)
            if vector is not None:
                found[key] = vector
        self.stats.cache_hits += sum(1 for k in keys if k in found)
        failures: list[_Result] = []
        while missing := [k for k in text_of if k not in found]:
            shared = {k: self._inflight[k] for k in missing if k in self._inflight}
            self.stats.coalesced += sum(1 for k in keys if k in shared)
            own = [k for k in missing if k not in shared]
            futures = {k: asyncio.get_running_loop().create_future() for k in own}
            self._inflight.update(futures)
            chunks = [own[i : i + self.batch] for i in range(0, len(own), self.batch)]
            sends = [self._send(chunk, [text_of[k] for k in chunk], futures) for chunk in chunks]
            await asyncio.gather(*sends, *(asyncio.shield(f) for f in shared.values()))
            for key, future in {**shared, **futures}.items():
                result = future.result()
                if result is None:  # its sender was cancelled: look again
                    continue
                if result.vector is None:
                    failures.append(result)
                    found[key] = np.zeros(0, dtype=np.float32)  # placeholder: the call fails below
                else:
                    found[key] = result.vector
        if failures:
            _raise(failures, len(texts))
        return self._matrix([found[k] for k in keys], normalised)

    def _cached(self, key: str) -> Vector | None:
        if self.cache is None:
            return None
        document = self.cache.get_json(key)
        if document is None:
            return None
        vector = decode_vector(document)
        if vector is None:
            _log.warning("%s: cached vector %s... unreadable; embedding it again", self.cache.path, key[:12])
        return vector

    async def _send(
        self, keys: list[str], texts: list[str], futures: Mapping[str, asyncio.Future[_Result | None]]
    ) -> None:
        """Embed one batch and resolve its keys' futures (None for each when this send is cancelled)."""
        results: dict[str, _Result] = {}
        try:
            embedder = self.embedder
            outcome = await self._sender.send(lambda: embedder.embed(texts))
            rows = None if outcome.value is None else np.asarray(outcome.value, dtype=np.float32)
            if rows is not None and (
                rows.ndim != 2 or len(rows) != len(texts) or not np.isfinite(rows).all()
            ):
                self.stats.errors += 1
                shape = "x".join(str(n) for n in rows.shape)
                outcome_error = f"the embedder returned {shape} values for {len(texts)} texts"
                results = {k: _Result(None, outcome_error) for k in keys}
            elif rows is None:
                results = {k: _Result(None, outcome.error, outcome.fatal) for k in keys}
            else:
                results = {k: _Result(row) for k, row in zip(keys, rows, strict=True)}
                if self.cache is not None:
                    await self.cache.store_documents(
                        {k: encode_vector(row) for k, row in zip(keys, rows, strict=True)}
                    )
        finally:
            for key in keys:
                del self._inflight[key]
                futures[key].set_result(results.get(key))

    def _matrix(self, rows: list[Vector], normalised: bool) -> Vectors:
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        if len({len(r) for r in rows}) != 1:
            raise ModelError(f"the embedder {dict(self.identity)} returned vectors of different lengths")
        matrix = np.stack(rows).astype(np.float32)
        return normalise(matrix) if normalised else matrix

    async def aclose(self) -> None:
        """Wait for batches in flight, then close the embedder if the runner owns it."""
        if self._inflight:
            await asyncio.gather(*self._inflight.values(), return_exceptions=True)
        if self.owns_embedder:
            await self.embedder.aclose()

    async def __aenter__(self) -> EmbeddingRunner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _raise(failures: list[_Result], n_texts: int) -> None:
    first = next((f for f in failures if f.fatal), failures[0])
    if first.fatal:
        raise FatalModelError(f"the run stopped: {first.error}")
    raise ModelError(f"embedding {len(failures)} of {n_texts} texts failed: {first.error}")


class BlockingEmbedder:
    """An :class:`EmbeddingRunner` for synchronous code: ``embed(texts)`` blocks until the vectors are in.

    The runner lives on a private event loop in a daemon thread, so this works
    from plain functions and from code already running inside another event loop.
    """

    def __init__(self, runner: EmbeddingRunner) -> None:
        self.runner = runner
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="recworld-embed", daemon=True)
        self._thread.start()
        self._closed = False

    @property
    def identity(self) -> Mapping[str, str]:
        return self.runner.identity

    def embed(self, texts: Sequence[str], *, normalised: bool = True) -> Vectors:
        return self._call(self.runner.embed(list(texts), normalised=normalised))

    def _call(self, work: Coroutine[Any, Any, T]) -> T:
        if self._closed:
            work.close()
            raise RuntimeError("this BlockingEmbedder is closed")
        done: ThreadFuture[T] = asyncio.run_coroutine_threadsafe(work, self._loop)
        return done.result()

    def close(self) -> None:
        """Close the runner (and its embedder) and stop the private loop."""
        if self._closed:
            return
        try:
            self._call(self.runner.aclose())
        finally:
            self._closed = True
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def __enter__(self) -> BlockingEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
