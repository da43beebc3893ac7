"""Python's cyclic garbage collector held back while requests are in flight.

A run allocates thousands of short-lived containers per second (requests,
futures, HTTP buffers) while its long-lived data (the suite's questions, the
prompts) sits still. With the default thresholds the collector runs every
700 allocations and, every few of those, walks every long-lived object again:
about a tenth of the client's time at a few thousand requests a second.

Invariant: while at least one :func:`quiet_collector` block is open, the
first generation's threshold is at least :data:`GEN0_THRESHOLD` and the
objects alive when the first block opened are frozen (never walked); when the
last block closes, the thresholds are exactly what they were before and the
frozen objects are collectable again. Blocks may nest and overlap across
tasks (a count, not a stack), so concurrent runs in one process never restore
each other's settings early. Garbage is still collected (only less often):
reference counting frees everything that is not a cycle, at once.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

GEN0_THRESHOLD = 50_000

_lock = threading.Lock()
_open = 0
_saved: tuple[int, int, int] | None = None


@contextlib.contextmanager
def quiet_collector() -> Iterator[None]:
    """Hold the collector back for the block (see the module docstring)."""
    global _open, _saved
    with _lock:
        if _open == 0:
            _saved = gc.get_threshold()
            gen0, gen1, gen2 = _saved
            gc.freeze()
            gc.set_threshold(max(gen0, GEN0_THRESHOLD), gen1, gen2)
        _open += 1
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            if _open == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()
                _saved = None
