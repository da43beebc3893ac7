"""Killing a command at a kill point in a child forked from a clean process (multiprocessing's forkserver).

:func:`kills.killed_at` forks the test process itself. That deadlocks for a
command using a library with a thread pool that the test process had used
already: polars, under Anonymeter's attacks in ``lunar synth``'s release step,
because a fork copies the pool's state but not its threads. The forkserver is
started once per test process, imports recworld there and never runs a
command itself, so each child it forks starts clean, and without paying
recworld's import again.

Module state patched in the test process does not cross over: the child gets
the environment, the working folder and whether swaps may use ``renameat2``
from the spec.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path
from typing import Any

KILLED = 137  # kills.KILLED


def run(spec: dict[str, Any]) -> None:
    """The child: ``spec`` holds ``point``, ``nth`` (1-based), ``argv``, ``env``, ``cwd`` and ``exchange``."""
    from recworld.cli import main
    from recworld.io import fault_hook
    from recworld.io import swap as swap_module

    os.environ.clear()
    os.environ.update(spec["env"])
    os.chdir(spec["cwd"])
    swap_module.USE_EXCHANGE = bool(spec["exchange"])
    point, nth, count = str(spec["point"]), int(spec["nth"]), 0

    def hook(name: str, _path: Path) -> None:
        nonlocal count
        if name == point:
            count += 1
            if count == nth:
                os._exit(KILLED)

    with fault_hook(hook):
        code = main([str(a) for a in spec["argv"]])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["recworld.cli", __name__])


def killed_in_clean_child(point: str, nth: int, argv: list[object], *, exchange: bool) -> int:
    """The exit code of ``argv`` run in a clean child killed at the ``nth`` passage of ``point``."""
    spec = {
        "point": point,
        "nth": nth,
        "argv": [str(a) for a in argv],
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "exchange": exchange,
    }
    child = _CONTEXT.Process(target=run, args=(spec,))
    child.start()
    child.join()
    assert child.exitcode is not None
    return child.exitcode
