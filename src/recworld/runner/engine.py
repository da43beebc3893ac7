"""The one road every LLM call takes: cache, coalescing, concurrency, timeout, retries.

A :class:`Runner` wraps a :class:`~recworld.models.Model`. ``complete`` looks
the request up in the :class:`~recworld.runner.cache.ResponseCache`, joins an
identical request already in flight instead of sending a second one, and
otherwise sends it through its :class:`~recworld.runner.sending.Sender`
(concurrency bound, per-attempt timeout, retries, the failure policy of one
request; see that module). A response is committed to the cache before its
caller sees it (group commit: one transaction per batch of answers), so a
process killed at any point re-sends only the requests that were in flight.

The failure policy (inspect_ai's ``fail_on_error`` is the reference): a
request that failed for good is a :class:`Completion` with ``error`` set, so
one bad request cannot sink a run of thousands; a fatal failure (bad key, no
such model, a server refusing every connection) stops everything: nothing more
is sent, ``complete`` and ``map`` raise
:class:`~recworld.models.base.FatalModelError`, ``map`` after cancelling the
requests still outstanding; any other exception is a bug in our code and
propagates with its traceback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from recworld.chat import Request, Response
from recworld.models.base import FatalModelError, Model, max_concurrency
from recworld.runner.cache import PREFETCH_CHUNK, CacheKeyer, ResponseCache
from recworld.runner.collector import quiet_collector
from recworld.runner.config import RunnerConfig, RunnerStats
from recworld.runner.progress import ProgressBar
from recworld.runner.sending import Sender

__all__ = [
    "Completion",
    "OnResult",
    "Runner",
    "RunnerConfig",
    "RunnerStats",
    "effective_concurrency",
]


@dataclass(frozen=True)
class Completion:
    """The outcome of one request: a response, or the error that ended its retries.

    ``cache_hit`` is true when this call sent nothing (a cache hit, or an
    identical request already in flight answered it). ``attempts`` counts the
    sends made on this call's behalf (0 for a hit). ``fatal`` marks an error
    that stops the run (see the module docstring).
    """

    response: Response | None
    error: str | None
    cache_hit: bool
    latency_s: float
    attempts: int
    fatal: bool = False

    @property
    def ok(self) -> bool:
        return self.response is not None


OnResult = Callable[[int, Completion], None]


def effective_concurrency(model: Model, requested: int) -> int:
    """``requested``, capped by what the model can serve at once (its ``max_concurrency``)."""
    bound = max_concurrency(model)
    return requested if bound is None else max(1, min(requested, bound))


class Runner:
    """Sends requests to one model; safe to share across asyncio tasks of one loop.

    The runner owns ``model`` (``aclose`` closes it) unless ``owns_model`` is
    False: a model object a caller handed to a library call stays the caller's,
    open. A ``cache`` may be shared by several runners and is closed by whoever
    opened it. Open one with :func:`recworld.runner.open_runner` (cache confined,
    closed in order).
    """

    def __init__(
        self,
        model: Model,
        config: RunnerConfig | None = None,
        cache: ResponseCache | None = None,
        *,
        owns_model: bool = True,
    ) -> None:
        self.model = model
        self.owns_model = owns_model
        self.config = config or RunnerConfig()
        self.cache = cache
        self.stats = RunnerStats()
        self._key = CacheKeyer(model.identity)
        self._sender = Sender(self.config, self.stats, effective_concurrency(model, self.config.concurrency))
        # One future per cache key being sent; twins await it. It resolves to the
        # sender's Completion, or to None when the sender was cancelled mid-send.
        self._inflight: dict[str, asyncio.Future[Completion | None]] = {}
        # Keys in flight whose answer has arrived and is being stored: a refresh waits them out.
        self._answered: set[str] = set()
        # complete() sends in a task of its own; keep strong references to them.
        self._detached: set[asyncio.Task[Completion]] = set()

    @property
    def stopped(self) -> str | None:
        """Why this runner stopped sending (a fatal failure), or None while it still sends."""
        return self._sender.stopped

    async def complete(self, request: Request, *, refresh: bool = False) -> Completion:
        """Answer ``request`` from the cache, an identical in-flight request, or the model.

        The send runs in a task of its own, so cancelling this call never
        cancels a send that identical requests are waiting for. Raises
        :class:`FatalModelError` when the failure must stop the run.

        ``refresh`` skips only the cache read: the request is sent under this
        runner's concurrency bound and counters (or joins an identical send whose
        answer has not come yet), and the reply replaces the cached one. It never
        gets a reply that had arrived before it was asked (LUNAR's
        ``--retry-failures`` asks a rejected cached reply again so).
        """
        completion = await self._complete(request, detach=True, refresh=refresh)
        if completion.fatal:  # the reason is the failure that stopped the runner, not this request's echo
            raise FatalModelError(f"the run stopped: {self.stopped or completion.error}")
        return completion

    async def _complete(
        self, request: Request, *, detach: bool, key: str | None = None, refresh: bool = False
    ) -> Completion:
        self.stats.requests += 1
        if key is None:
            key = self._key(request)
        while (pending := self._inflight.get(key)) is not None:
            # A refresh joins only a send still waiting for its answer: one already
            # answered may hold the very reply this caller asks to replace.
            stale = refresh and key in self._answered
            # shield: cancelling this waiter must not cancel the shared future.
            shared = await asyncio.shield(pending)
            if stale:
                continue
            if shared is not None and shared.fatal and shared.attempts == 0:
                return shared  # the twin was never sent (the run had stopped): neither is this one
            if shared is not None:
                self.stats.coalesced += 1
                return replace(shared, cache_hit=True, attempts=0)
            # The sender was cancelled mid-send: this caller did not ask to be
            # cancelled, so it looks again (a twin may have taken over) or sends.
        if self.cache is not None and not refresh:
            cached = self.cache.get_entry(key)
            if cached is not None:
                self.stats.cache_hits += 1
                # The original send time, so time tables count cached answers at their real cost.
                return Completion(cached[0], None, cache_hit=True, latency_s=cached[1], attempts=0)
        # No await between the lookups above and registering the future, so two
        # identical requests can never both get here.
        future: asyncio.Future[Completion | None] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        if not detach:
            # map's own workers send inline: no task, no shield. A worker is only
            # cancelled with its whole map; twins then resend (see _publish).
            return await self._publish(request, key, future)
        task = asyncio.create_task(self._publish(request, key, future))
        self._detached.add(task)
        task.add_done_callback(self._detached.discard)
        # shield: a cancelled caller must not cancel the send others may be awaiting.
        return await asyncio.shield(task)

    async def _publish(
        self, request: Request, key: str, future: asyncio.Future[Completion | None]
    ) -> Completion:
        """Send ``request`` and hand the outcome to every twin awaiting ``future``."""
        completion: Completion | None = None
        try:
            completion = await self._send(request, key)
            return completion
        finally:
            # _send turns every model failure into a Completion, so None here
            # means this send was cancelled: twins wake up and retry themselves.
            del self._inflight[key]
            self._answered.discard(key)
            future.set_result(completion)

    async def map(
        self,
        requests: Sequence[Request],
        *,
        description: str = "",
        on_result: OnResult | None = None,
    ) -> list[Completion]:
        """Complete every request; results keep the input order.

        ``on_result(index, completion)`` is called as each one finishes (for
        journaling). A bounded pool of workers walks the list, so a million
        requests do not become a million pending tasks. A fatal completion is
        reported to ``on_result`` too, then every outstanding request is
        cancelled and :class:`FatalModelError` raised; so is a bug's exception.
        """
        results: list[Completion | None] = [None] * len(requests)
        bar = ProgressBar(len(requests), description, enabled=self.config.progress)
        cursor = self._keyed(requests)

        async def worker() -> None:
            for index, key in cursor:
                completion = await self._complete(requests[index], detach=False, key=key)
                if completion.fatal and completion.attempts == 0 and not completion.cache_hit:
                    # Never sent: the run stopped before its turn. Not a sample, just not asked.
                    raise FatalModelError(f"the run stopped: {self._sender.stopped}")
                results[index] = completion
                bar.advance(error=completion.error is not None, retries=max(completion.attempts - 1, 0))
                if on_result is not None:
                    on_result(index, completion)
                if completion.fatal:
                    raise FatalModelError(f"the run stopped: {self._sender.stopped or completion.error}")

        # Twice the concurrency: workers sleeping in backoff or awaiting a
        # coalesced twin do not leave send slots idle.
        n_workers = min(len(requests), 2 * self.config.concurrency)
        try:
            with quiet_collector():
                await _all_or_first_failure([worker() for _ in range(n_workers)])
        finally:
            bar.close()
        return [r for r in results if r is not None]

    def _keyed(self, requests: Sequence[Request]) -> Iterator[tuple[int, str]]:
        """``(index, cache key)`` in order; keys are made a chunk ahead and prefetched in one query.

        A chunk at a time, so the first request goes out at once however long
        the list, and a miss then costs the cache no query of its own.
        """
        for start in range(0, len(requests), PREFETCH_CHUNK):
            stop = min(start + PREFETCH_CHUNK, len(requests))
            keys = [self._key(requests[i]) for i in range(start, stop)]
            if self.cache is not None:
                self.cache.prefetch(keys)
            yield from zip(range(start, stop), keys, strict=True)

    async def aclose(self) -> None:
        """Wait for sends still in flight, then close the model if the runner owns it."""
        if self._inflight or self._detached:
            await asyncio.gather(*self._inflight.values(), *self._detached, return_exceptions=True)
        if self.owns_model:
            await self.model.aclose()

    async def __aenter__(self) -> Runner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, request: Request, key: str) -> Completion:
        model = self.model
        outcome = await self._sender.send(lambda: model.complete(request))
        response = outcome.value
        if response is None:
            return Completion(
                None, outcome.error, False, outcome.busy_s, outcome.attempts, fatal=outcome.fatal
            )
        if self.cache is not None:
            self._answered.add(key)
            await self.cache.store(key, response, outcome.busy_s)
        return Completion(response, None, False, outcome.busy_s, outcome.attempts)

    def backoff_s(self, attempt: int, retry_after: float | None = None) -> float:
        """The sender's full-jitter backoff after failed ``attempt`` (see :class:`Sender`)."""
        return self._sender.backoff_s(attempt, retry_after)


async def _all_or_first_failure(jobs: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run ``jobs`` together; on the first exception cancel the rest, wait for them, re-raise it."""
    tasks = [asyncio.create_task(job) for job in jobs]
    if not tasks:
        return
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:  # this map itself was cancelled
        _cancel(tasks)
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    failed = [t for t in done if not t.cancelled() and t.exception() is not None]
    if not failed:
        return
    _cancel(pending)
    await asyncio.gather(*pending, return_exceptions=True)
    # The first to fail in list order: deterministic when several failed together.
    first = next(t for t in tasks if t in failed)
    raise first.exception()  # type: ignore[misc]


def _cancel(tasks: Iterable[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
