"""The one way to open a Runner: its cache confined, its model owned or borrowed, closed in order.

Every caller that asks a model through the engine (an LRWorld run, the Ray
replicas' driver, a LUNAR session, an embedder, ``describe-images``, the
contract tests) opens its runner here, so three rules hold on every road:

* **Confinement.** The cache file is :func:`recworld.io.confined` before it is
  opened: a cache path that passes through a symbolic link inside a claimed
  output folder is a :class:`~recworld.errors.ConfigError`, never a SQLite file
  written through the link.
* **Ownership.** ``owned`` says who closes the model: True, the runner does (a
  model this caller loaded from a spec); False, its caller does (an object handed
  over from Python, or a model a longer-lived frame holds). There is no wrapper
  class: the flag is :class:`Runner`'s ``owns_model`` (:class:`EmbeddingRunner`'s
  ``owns_embedder``), and a borrowed model is the runner's ``model`` itself, so
  every capability it declares is seen as it is. An owned model is closed even
  when the cache cannot be opened; a borrowed one never is, on any exit.
* **Order.** On exit the runner first waits for the sends still in flight
  (coalesced twins, detached sends, embedding batches), then closes an owned
  model, then the cache, so no answer arrives at a closed model or is stored
  into a closed cache.

:func:`open_runner` and :func:`open_embedding_runner` are async context
managers; :func:`open_blocking_embedder` is the synchronous twin for code that
embeds from plain functions (:class:`~recworld.runner.BlockingEmbedder`).
:func:`answer_all` is :func:`open_runner` plus one ``map``, for a caller that
owns its model and needs nothing else (Ray's driver).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from recworld.chat import Request
from recworld.io import confined
from recworld.models.base import FatalModelError, Model
from recworld.models.embedding import Embedder
from recworld.runner.cache import ResponseCache
from recworld.runner.config import RunnerConfig, RunnerStats
from recworld.runner.embeddings import BlockingEmbedder, EmbeddingRunner
from recworld.runner.engine import OnResult, Runner

__all__ = ["answer_all", "open_blocking_embedder", "open_embedding_runner", "open_runner"]


def _open_cache(path: Path | None) -> ResponseCache | None:
    """The response cache at ``path`` (None: no cache), refused when it passes through a link in an output."""
    return None if path is None else ResponseCache(confined(path))


@asynccontextmanager
async def open_runner(
    model: Model, config: RunnerConfig | None, cache_path: Path | None, *, owned: bool
) -> AsyncIterator[Runner]:
    """A :class:`Runner` for ``model`` over the cache at ``cache_path``; see the module docstring."""
    try:
        cache = _open_cache(cache_path)
    except BaseException:
        if owned:
            await model.aclose()
        raise
    runner = Runner(model, config, cache, owns_model=owned)
    try:
        yield runner
    finally:
        try:
            await runner.aclose()  # drains what is in flight, then closes an owned model
        finally:
            if cache is not None:
                cache.close()


@asynccontextmanager
async def open_embedding_runner(
    embedder: Embedder, config: RunnerConfig | None, cache_path: Path | None, *, owned: bool
) -> AsyncIterator[EmbeddingRunner]:
    """:func:`open_runner` for an embedder: an :class:`EmbeddingRunner` over the cache at ``cache_path``."""
    try:
        cache = _open_cache(cache_path)
    except BaseException:
        if owned:
            await embedder.aclose()
        raise
    runner = EmbeddingRunner(embedder, config, cache, owns_embedder=owned)
    try:
        yield runner
    finally:
        try:
            await runner.aclose()
        finally:
            if cache is not None:
                cache.close()


@contextmanager
def open_blocking_embedder(
    embedder: Embedder, config: RunnerConfig | None, cache_path: Path | None, *, owned: bool
) -> Iterator[BlockingEmbedder]:
    """:func:`open_embedding_runner` for synchronous code (also inside a running event loop).

    The runner lives on the :class:`BlockingEmbedder`'s private loop, which is
    also where an owned embedder is closed when the cache cannot be opened.
    """
    try:
        cache = _open_cache(cache_path)
    except BaseException:
        if owned:
            BlockingEmbedder(EmbeddingRunner(embedder, owns_embedder=True)).close()
        raise
    blocking = BlockingEmbedder(EmbeddingRunner(embedder, config, cache, owns_embedder=owned))
    try:
        yield blocking
    finally:
        try:
            blocking.close()
        finally:
            if cache is not None:
                cache.close()


async def answer_all(
    model: Model,
    requests: Sequence[Request],
    config: RunnerConfig,
    cache_path: Path | None,
    *,
    description: str = "",
    on_result: OnResult | None = None,
) -> tuple[RunnerStats, FatalModelError | None]:
    """Answer ``requests`` through one runner over the cache at ``cache_path`` (None: no cache).

    The road of a run whose model this call owns and that needs nothing but
    ``map``: Ray's driver (:mod:`recworld.evaluation.ray_engine`), whose model is
    the pool of replicas. A local LRWorld run opens its runner itself with the same
    :func:`~recworld.runner.open_runner`, because it first times one request
    (:mod:`recworld.evaluation.estimate`) and its model belongs to the run.
    Returns the runner's counters and the fatal failure that stopped it, if one
    did (what finished before it went to ``on_result``). ``model`` is closed at the
    end, after what was in flight, then the cache.
    """
    stopped: FatalModelError | None = None
    async with open_runner(model, config, cache_path, owned=True) as runner:
        try:
            await runner.map(requests, description=description, on_result=on_result)
        except FatalModelError as exc:
            stopped = exc
    return runner.stats, stopped
