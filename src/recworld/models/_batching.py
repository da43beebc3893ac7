"""An async micro-batcher: requests that arrive together are answered by one batched call.

The runner sends requests concurrently, one coroutine each. A local engine is
far faster on a batch than on the same prompts one by one, so the batcher
holds each request for at most ``wait_s`` (or until ``max_batch`` are waiting),
then hands the whole group to a blocking ``run`` function in a worker thread.
Only one batch runs at a time.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class MicroBatcher(Generic[T, R]):
    """Collects items and answers them with ``run(items) -> results`` (same order, same length)."""

    def __init__(self, run: Callable[[Sequence[T]], Sequence[R]], *, max_batch: int, wait_s: float) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._run = run
        self._max_batch = max_batch
        self._wait_s = wait_s
        self._pending: list[tuple[T, asyncio.Future[R]]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._lock = threading.Lock()  # one batch at a time, across threads and event loops
        self.batch_sizes: list[int] = []  # for tests and benchmarks

    async def submit(self, item: T) -> R:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        self._pending.append((item, future))
        if len(self._pending) >= self._max_batch:
            self._flush()
        elif self._timer is None:
            self._timer = loop.call_later(self._wait_s, self._flush)
        return await future

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._pending = self._pending, []
        if not batch:
            return
        task = asyncio.get_running_loop().create_task(self._answer(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        items = [item for item, _ in batch]
        try:
            results = await asyncio.to_thread(self._run_locked, items)
            if len(results) != len(items):
                raise RuntimeError(f"batch function returned {len(results)} results for {len(items)} items")
        except Exception as exc:
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)

    def _run_locked(self, items: Sequence[T]) -> Sequence[R]:
        with self._lock:
            self.batch_sizes.append(len(items))
            return self._run(items)

    @property
    def lock(self) -> threading.Lock:
        """Held while a batch runs; other work on the same engine takes it too."""
        return self._lock
