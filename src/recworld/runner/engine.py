"""The one road every LLM call takes: cache, coalescing, concurrency, timeout, retries.

A :class:`Runner` wraps a :class:`~recworld.models.Model`. ``complete`` looks
the request up in the :class:`~recworld.runner.cache.ResponseCache`, joins an
identical request already in flight instead of sending a second one, and
otherwise sends it under a semaphore with a per-attempt timeout.

The failure policy (inspect_ai's ``fail_on_error`` is the reference):

- transient failures (``TransientModelError``, timeouts) are retried with
  exponential backoff and full jitter, honouring a server's ``Retry-After``;
- a ``ModelError`` (the model refused this one request) is not retried; it and
  a transient failure that outlived its retries end as a :class:`Completion`
  with ``error`` set, so one bad request cannot sink a run of thousands;
- a ``FatalModelError`` (bad key, no such model) and a request whose every
  attempt failed to connect stop everything: ``complete`` and ``map`` raise
  :class:`~recworld.models.base.FatalModelError`, ``map`` after cancelling
  the requests still outstanding;
- any other exception is a bug in our code: it propagates with its traceback.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from recworld.chat import Request, Response
from recworld.console.options import Flag
from recworld.errors import ModelError
from recworld.models.base import (
    BoundedModel,
    ConnectionFailedError,
    FatalModelError,
    Model,
    TransientModelError,
)
from recworld.runner.cache import CacheKeyer, ResponseCache
from recworld.runner.deadlines import Deadlines
from recworld.runner.progress import ProgressBar
from recworld.seeding import rng


class RunnerConfig(BaseModel):
    """How requests are sent; none of these settings enters the cache key."""

    model_config = ConfigDict(extra="forbid")

    # Each setting's help and flag are declared here once (recworld.console.options).
    concurrency: Annotated[int, Field(ge=1, description="Requests in flight.")] = 8
    max_retries: Annotated[int, Field(ge=0, description="Retries per request.")] = 6
    timeout_s: Annotated[
        float, Field(gt=0, description="Seconds per request attempt."), Flag("--timeout")
    ] = 120.0
    backoff_base_s: Annotated[
        float, Field(ge=0, description="First retry waits up to this, in seconds."), Flag("--backoff")
    ] = 0.5
    backoff_max_s: Annotated[
        float, Field(ge=0, description="Longest retry wait, in seconds."), Flag("--backoff-max")
    ] = 60.0
    progress: Annotated[bool, Field(description="Show progress on stderr.")] = True
    # Seeds the backoff jitter so a rerun waits the same way (recworld.seeding).
    seed: int = 0


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


@dataclass
class RunnerStats:
    """Counters over the runner's lifetime."""

    requests: int = 0  # complete() calls
    sent: int = 0  # attempts handed to the model (retries included)
    cache_hits: int = 0
    coalesced: int = 0  # calls answered by an identical request already in flight
    retries: int = 0
    errors: int = 0  # requests that ended with an error

    def to_json(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "sent": self.sent,
            "cache_hits": self.cache_hits,
            "coalesced": self.coalesced,
            "retries": self.retries,
            "errors": self.errors,
        }


@dataclass
class _Attempt:
    response: Response | None = None
    error: str | None = None
    retryable: bool = False
    retry_after: float | None = None
    fatal: bool = False
    connection: bool = False  # the server could not be reached at all


OnResult = Callable[[int, Completion], None]


def effective_concurrency(model: Model, requested: int) -> int:
    """``requested``, capped by what a :class:`BoundedModel` can serve at once."""
    if isinstance(model, BoundedModel):
        return max(1, min(requested, model.max_concurrency))
    return requested


class Runner:
    """Sends requests to one model; safe to share across asyncio tasks of one loop.

    The runner owns ``model`` (``aclose`` closes it); a ``cache`` may be shared
    by several runners and is closed by whoever opened it.
    """

    def __init__(
        self, model: Model, config: RunnerConfig | None = None, cache: ResponseCache | None = None
    ) -> None:
        self.model = model
        self.config = config or RunnerConfig()
        self.cache = cache
        self.stats = RunnerStats()
        self._key = CacheKeyer(model.identity)
        self._semaphore = asyncio.Semaphore(effective_concurrency(model, self.config.concurrency))
        # One future per cache key being sent; twins await it. It resolves to the
        # sender's Completion, or to None when the sender was cancelled mid-send.
        self._inflight: dict[str, asyncio.Future[Completion | None]] = {}
        # complete() sends in a task of its own; keep strong references to them.
        self._detached: set[asyncio.Task[Completion]] = set()
        self._deadlines = Deadlines(self.config.timeout_s)
        self._jitter = rng(self.config.seed, "runner", "backoff-jitter")

    async def complete(self, request: Request) -> Completion:
        """Answer ``request`` from the cache, an identical in-flight request, or the model.

        The send runs in a task of its own, so cancelling this call never
        cancels a send that identical requests are waiting for. Raises
        :class:`FatalModelError` when the failure must stop the run.
        """
        completion = await self._complete(request, detach=True)
        if completion.fatal:
            raise FatalModelError(f"the run stopped: {completion.error}")
        return completion

    async def _complete(self, request: Request, *, detach: bool) -> Completion:
        self.stats.requests += 1
        key = self._key(request)
        while (pending := self._inflight.get(key)) is not None:
            # shield: cancelling this waiter must not cancel the shared future.
            shared = await asyncio.shield(pending)
            if shared is not None:
                self.stats.coalesced += 1
                return replace(shared, cache_hit=True, attempts=0)
            # The sender was cancelled mid-send: this caller did not ask to be
            # cancelled, so it looks again (a twin may have taken over) or sends.
        if self.cache is not None:
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
        cursor = iter(range(len(requests)))

        async def worker() -> None:
            for index in cursor:
                completion = await self._complete(requests[index], detach=False)
                results[index] = completion
                bar.advance(error=completion.error is not None, retries=max(completion.attempts - 1, 0))
                if on_result is not None:
                    on_result(index, completion)
                if completion.fatal:
                    raise FatalModelError(f"the run stopped: {completion.error}")

        # Twice the concurrency: workers sleeping in backoff or awaiting a
        # coalesced twin do not leave send slots idle.
        n_workers = min(len(requests), 2 * self.config.concurrency)
        try:
            await _all_or_first_failure([worker() for _ in range(n_workers)])
        finally:
            bar.close()
        return [r for r in results if r is not None]

    async def aclose(self) -> None:
        """Wait for sends still in flight, then close the model."""
        if self._inflight or self._detached:
            await asyncio.gather(*self._inflight.values(), *self._detached, return_exceptions=True)
        await self.model.aclose()

    async def __aenter__(self) -> Runner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, request: Request, key: str) -> Completion:
        # Latency is time spent in the model, summed over attempts: neither the
        # wait for a concurrency slot nor backoff sleeps count.
        busy = 0.0
        attempts = 0
        unreachable = True  # every attempt so far failed to connect
        while True:
            attempts += 1
            async with self._semaphore:
                self.stats.sent += 1
                started = time.perf_counter()
                outcome = await self._attempt(request)
                busy += time.perf_counter() - started
            if outcome.response is not None:
                if self.cache is not None:
                    self.cache.put(key, outcome.response, busy)
                return Completion(outcome.response, None, False, busy, attempts)
            unreachable = unreachable and outcome.connection
            if not outcome.retryable or attempts > self.config.max_retries:
                self.stats.errors += 1
                error = outcome.error or "unknown error"
                if outcome.retryable:
                    error = f"gave up after {attempts} attempts: {error}"
                fatal = outcome.fatal or (outcome.retryable and unreachable)
                return Completion(None, error, False, busy, attempts, fatal=fatal)
            self.stats.retries += 1
            # Sleep outside the semaphore so healthy requests keep flowing.
            await asyncio.sleep(self.backoff_s(attempts, outcome.retry_after))

    async def _attempt(self, request: Request) -> _Attempt:
        # Deadlines: asyncio.timeout's semantics with one shared timer (no
        # timer per attempt, no extra task as wait_for would add).
        slot = self._deadlines.start()
        try:
            response = await self.model.complete(request)
        except BaseException as exc:
            if self._deadlines.finish(slot, cancelled=isinstance(exc, asyncio.CancelledError)):
                return _Attempt(error=f"timed out after {self.config.timeout_s:g}s", retryable=True)
            return _classify(exc, self.config.timeout_s)
        self._deadlines.finish(slot, cancelled=False)
        return _Attempt(response=response)

    def backoff_s(self, attempt: int, retry_after: float | None = None) -> float:
        """Full-jitter exponential backoff after failed ``attempt`` (1-based), capped.

        A server's ``retry_after`` is a floor: waiting less would only earn
        another 429. The cap ``backoff_max_s`` wins over both.
        """
        ceiling = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** (attempt - 1))
        delay = float(self._jitter.uniform(0.0, ceiling)) if ceiling > 0 else 0.0
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self.config.backoff_max_s)


def _classify(exc: BaseException, timeout_s: float) -> _Attempt:
    """What a failed attempt means; re-raises what is not a model failure (a bug, a cancel)."""
    if isinstance(exc, TransientModelError):
        return _Attempt(
            error=_describe(exc),
            retryable=True,
            retry_after=exc.retry_after,
            connection=isinstance(exc, ConnectionFailedError),
        )
    if isinstance(exc, TimeoutError):
        return _Attempt(error=f"timed out after {timeout_s:g}s", retryable=True)
    if isinstance(exc, FatalModelError):
        return _Attempt(error=_describe(exc), fatal=True)
    if isinstance(exc, ModelError):  # this request failed for good: a sample error, not a crash
        return _Attempt(error=_describe(exc))
    raise exc


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


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
