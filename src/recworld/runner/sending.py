"""One send with its retries: the failure policy of a single request, shared by every runner.

:class:`Sender` takes a call (``model.complete(request)``, ``embedder.embed(texts)``)
and makes it under the runner's concurrency bound, with a per-attempt
timeout, retries and back-off:

- transient failures (``TransientModelError``, timeouts) are retried with
  exponential backoff and full jitter, honouring a server's ``Retry-After``;
- a ``ModelError`` (the model refused this one request) is not retried; it and
  a transient failure that outlived its retries end as an :class:`Outcome`
  with ``error`` set;
- a ``FatalModelError`` (bad key, no such model) and a request whose every
  attempt failed to connect are fatal: the sender is *stopped* at once, before
  its concurrency slot is released, so no request waiting for a slot, no retry
  and no later call is sent at all (a second wave after a 401 would only earn
  more 401s);
- any other exception is a bug in our code: it propagates with its traceback.

It also keeps the event loop responsive when a model answers synchronously
(a classic baseline computes in-process and never suspends, so without help
one ``map`` would hold the loop until its last answer and Ctrl-C would wait
for it). While sends are active a heartbeat timer fires every
:data:`TICK_S`; a send whose attempt ends more than :data:`YIELD_EVERY_S`
after the last heartbeat yields to the loop before going on. A healthy loop
runs the heartbeat all the time, so a model that suspends by itself (every
HTTP backend) never pays for an extra yield; a blocked loop makes every
worker yield before its next attempt, the loop completes its turn, and timers, cancellations
and Ctrl-C are seen within one answer plus :data:`YIELD_EVERY_S`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from recworld.chat import clean_text
from recworld.errors import ModelError
from recworld.models.base import ConnectionFailedError, FatalModelError, TransientModelError
from recworld.runner.config import RunnerConfig, RunnerStats
from recworld.runner.deadlines import Deadlines
from recworld.seeding import rng

T = TypeVar("T")

TICK_S = 0.01
YIELD_EVERY_S = 0.05


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What one send came to: a value, or the error that ended its retries."""

    value: T | None
    error: str | None
    attempts: int  # sends made (0: the sender was stopped before this one went out)
    busy_s: float  # time spent in the model, summed over attempts
    fatal: bool = False


@dataclass
class _Attempt(Generic[T]):
    value: T | None = None
    error: str | None = None
    retryable: bool = False
    retry_after: float | None = None
    fatal: bool = False
    connection: bool = False  # the server could not be reached at all


class Sender:
    """Sends calls under one semaphore with timeouts and retries; shared by a runner's requests."""

    def __init__(self, config: RunnerConfig, stats: RunnerStats, concurrency: int) -> None:
        self.config = config
        self.stats = stats
        self.semaphore = asyncio.Semaphore(concurrency)
        self.stopped: str | None = None  # why the run stopped, once a fatal failure was seen
        self._deadlines = Deadlines(config.timeout_s)
        self._jitter = rng(config.seed, "runner", "backoff-jitter")
        self._active = 0  # sends in progress
        self._ticked = time.perf_counter()  # when the loop last ran the heartbeat
        self._ticking: asyncio.AbstractEventLoop | None = None  # the loop the heartbeat runs on

    def _tick(self) -> None:
        self._ticked = time.perf_counter()
        loop = self._ticking
        if self._active and loop is not None and not loop.is_closed():
            loop.call_later(TICK_S, self._tick)
        else:
            self._ticking = None

    def _start_ticking(self) -> None:
        loop = asyncio.get_running_loop()
        if self._ticking is not loop:
            self._ticking = loop
            self._ticked = time.perf_counter()
            loop.call_later(TICK_S, self._tick)

    async def send(self, call: Callable[[], Awaitable[T]]) -> Outcome[T]:
        """Make ``call`` until it succeeds, fails for good, or the sender is stopped."""
        self._active += 1
        self._start_ticking()
        try:
            return await self._send(call)
        finally:
            self._active -= 1

    async def _send(self, call: Callable[[], Awaitable[T]]) -> Outcome[T]:
        # Latency is time spent in the model, summed over attempts: neither the
        # wait for a concurrency slot nor backoff sleeps count.
        busy = 0.0
        attempts = 0
        unreachable = True  # every attempt so far failed to connect
        while True:
            while time.perf_counter() - self._ticked > YIELD_EVERY_S:
                await asyncio.sleep(0)  # the loop missed its heartbeat: let it run its timers first
            async with self.semaphore:
                if self.stopped is not None:
                    return Outcome(None, f"not sent: {self.stopped}", attempts, busy, fatal=True)
                attempts += 1
                self.stats.sent += 1
                started = time.perf_counter()
                outcome = await self._attempt(call)
                finished = time.perf_counter()
                busy += finished - started
                unreachable = unreachable and outcome.connection
                done = (
                    outcome.value is not None or not outcome.retryable or attempts > self.config.max_retries
                )
                fatal = outcome.fatal or (done and outcome.retryable and unreachable)
                error = outcome.error or "unknown error"
                if done and outcome.retryable:
                    error = f"gave up after {attempts} attempts: {error}"
                if fatal:  # before the slot is released: nobody waiting for it may send
                    # The run's reason is the failure itself, as its own sample records it.
                    self.stopped = error
            if outcome.value is not None:
                return Outcome(outcome.value, None, attempts, busy)
            if done:
                self.stats.errors += 1
                return Outcome(None, error, attempts, busy, fatal=fatal)
            self.stats.retries += 1
            # Sleep outside the semaphore so healthy requests keep flowing.
            await asyncio.sleep(self.backoff_s(attempts, outcome.retry_after))

    async def _attempt(self, call: Callable[[], Awaitable[T]]) -> _Attempt[T]:
        # Deadlines: asyncio.timeout's semantics with one shared timer (no
        # timer per attempt, no extra task as wait_for would add).
        slot = self._deadlines.start()
        try:
            value = await call()
        except BaseException as exc:
            if self._deadlines.finish(slot, cancelled=isinstance(exc, asyncio.CancelledError)):
                return _Attempt(error=f"timed out after {self.config.timeout_s:g}s", retryable=True)
            return _classify(exc, self.config.timeout_s)
        self._deadlines.finish(slot, cancelled=False)
        return _Attempt(value=value)

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


def _classify(exc: BaseException, timeout_s: float) -> _Attempt[T]:
    """What a failed attempt means; re-raises what is not a model failure (a bug, a cancel)."""
    if isinstance(exc, TransientModelError):
        return _Attempt(
            error=describe(exc),
            retryable=True,
            retry_after=exc.retry_after,
            connection=isinstance(exc, ConnectionFailedError),
        )
    if isinstance(exc, TimeoutError):
        return _Attempt(error=f"timed out after {timeout_s:g}s", retryable=True)
    if isinstance(exc, FatalModelError):
        return _Attempt(error=describe(exc), fatal=True)
    if isinstance(exc, ModelError):  # this request failed for good: a sample error, not a crash
        return _Attempt(error=describe(exc))
    raise exc


def describe(exc: BaseException) -> str:
    """``Type: first line of the message``: how an error is shown in a sample and a log.

    Always valid Unicode (:func:`recworld.chat.clean_text`): an error quoting a
    server's lone surrogate must not crash the journal that records it.
    """
    message = clean_text(str(exc)).strip()
    text = message.splitlines()[0] if message else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
