"""Per-attempt timeouts that share one timer.

``asyncio.timeout`` schedules and cancels a timer per use (about 5 us in
Python 3.11, a large part of the runner's own cost per request). Every attempt
of one runner has the same length, so deadlines arrive in start order: an
insertion-ordered dict of live attempts is also a queue by deadline, and one
timer set for the oldest live deadline serves them all. Expiry follows
``asyncio.timeout``: the task is cancelled, and the attempt turns the
resulting ``CancelledError`` into a timeout only when nobody else cancelled it
too (``Task.uncancel``).
"""

from __future__ import annotations

import asyncio


class Slot:
    """One attempt's deadline; hashable by identity."""

    __slots__ = ("cancelling", "deadline", "expired", "task")

    def __init__(self, deadline: float, task: asyncio.Task[object], cancelling: int) -> None:
        self.deadline = deadline
        self.task = task
        self.cancelling = cancelling
        self.expired = False


class Deadlines:
    """Timeouts of ``timeout_s`` for attempts started with :meth:`start`."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._live: dict[Slot, None] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> Slot:
        """Register the current task's attempt; its deadline is ``timeout_s`` from now."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None, "Deadlines.start must run inside a task"
        if loop is not self._loop:
            # A runner may outlive one asyncio.run; the old loop's timer is dead.
            self._loop, self._timer = loop, None
            self._live.clear()
        slot = Slot(loop.time() + self.timeout_s, task, task.cancelling())
        self._live[slot] = None
        if self._timer is None:
            self._timer = loop.call_at(slot.deadline, self._fire)
        return slot

    def finish(self, slot: Slot, *, cancelled: bool) -> bool:
        """Unregister ``slot``; True when its expiry (and nothing else) cancelled the attempt."""
        self._live.pop(slot, None)
        if not slot.expired:
            return False
        return slot.task.uncancel() <= slot.cancelling and cancelled

    def _fire(self) -> None:
        self._timer = None
        loop = self._loop
        assert loop is not None
        now = loop.time()
        while self._live:
            slot = next(iter(self._live))
            if slot.deadline > now:
                self._timer = loop.call_at(slot.deadline, self._fire)
                return
            del self._live[slot]
            slot.expired = True
            slot.task.cancel()
