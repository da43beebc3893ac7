"""A command in a child forked from the test process: a separate process, without a second of imports.

Some security cases need a process of their own, not a fresh interpreter: a read that once hung
(a device or a FIFO read to its end) must fail the case, not hang the suite, and a ``kill -9`` must
come from outside the command. A child forked from pytest's process has recworld imported
already, so it starts at once. (Commands that use polars' thread pool cannot run in such a child:
:mod:`kill_child`.)

:func:`forked` waits for the child's exit through a pidfd, up to a deadline; a child still running
then is killed and the case fails. :class:`Child` is the same child started, to wait for or to kill
later (two at once on one folder). :func:`paused_then_killed` lets the child run to a kill point,
where it stops and says so through a pipe, and then sends it ``SIGKILL`` from the parent.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from recworld.io import fault_hook


def exit_with(work: Callable[[], int], failed: int) -> NoReturn:
    """In a forked child: end it with ``work()``'s exit code, or ``failed`` and the traceback on stderr.

    Never returns, and runs none of the cleanup copied from the parent
    (``os._exit``); stdout and stderr are flushed first. The children forked
    here and those of :mod:`kill_child`'s server all end through it.
    """
    code = failed
    try:
        code = work()
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _child(work: Callable[[], int], stderr: Path) -> NoReturn:
    """In the child: ``work()`` with stderr into ``stderr`` and stdout dropped; never returns."""

    def redirected() -> int:
        fd = os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 2)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        sys.stdout = os.fdopen(1, "w")
        return work()

    exit_with(redirected, 99)


def _exited_within(pid: int, timeout: float) -> int | None:
    """The child's exit code once it ends, or None (it still runs) after ``timeout`` seconds."""
    handle = os.pidfd_open(pid)
    try:
        ended, _, _ = select.select([handle], [], [], timeout)
    finally:
        os.close(handle)
    if not ended:
        return None
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _killed(pid: int) -> int:
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


class Child:
    """``work()`` started in a forked child, to wait for or kill like a ``subprocess.Popen``."""

    def __init__(self, work: Callable[[], int], stderr: Path) -> None:
        self.stderr = stderr
        self.pid = os.fork()
        if self.pid == 0:
            _child(work, stderr)
        self.code: int | None = None

    def poll(self) -> int | None:
        if self.code is None:
            self.code = _exited_within(self.pid, 0)
        return self.code

    def wait(self, timeout: float) -> int:
        """The exit code; a child still running after ``timeout`` seconds is killed and the case fails."""
        if self.code is None:
            self.code = _exited_within(self.pid, timeout)
        if self.code is None:
            self.code = _killed(self.pid)
            raise AssertionError(f"still running after {timeout} s (killed): a hang")
        return self.code

    def kill(self) -> int:
        """``kill -9`` from here; the exit code (``-SIGKILL`` unless it had ended first)."""
        if self.code is None:
            self.code = _killed(self.pid)
        return self.code


def forked(work: Callable[[], int], stderr: Path, *, timeout: float = 60) -> tuple[int, str, float]:
    """``work()`` in a forked child: its exit code, its stderr and its seconds; killed at ``timeout``."""
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(work, stderr)
    code = _exited_within(pid, timeout)
    if code is None:
        _killed(pid)
        raise AssertionError(f"still running after {timeout} s (killed): a hang")
    return code, stderr.read_text(errors="replace"), time.monotonic() - started


def paused_then_killed(
    point: str, target: Path, work: Callable[[], int], stderr: Path, *, timeout: float = 120
) -> int:
    """Run ``work()`` in a forked child, ``kill -9`` it from here once it reaches ``point`` for ``target``.

    Returns the child's exit code (``-SIGKILL`` when the kill landed). A child that ends or runs
    past ``timeout`` without reaching the point fails the case.
    """
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(readable)

        def hook(name: str, path: Path) -> None:
            if name == point and path == target:
                os.write(writable, b"paused")
                time.sleep(600)  # until the kill

        def paused() -> int:
            with fault_hook(hook):
                return work()

        _child(paused, stderr)
    os.close(writable)
    try:
        ready, _, _ = select.select([readable], [], [], timeout)
        said = os.read(readable, 16) if ready else b""
    finally:
        os.close(readable)
    if said != b"paused":  # ended (the pipe closed) or still running: never reached the point
        code = _exited_within(pid, 5 if ready else 0)  # the pipe closed as the child ended
        if code is None:
            _killed(pid)
        raise AssertionError(f"never reached {point} (exit {code}): {stderr.read_text(errors='replace')}")
    return _killed(pid)
