"""Killing a command at a kill point in a child forked from a clean, warmed-up server process.

:func:`kills.killed_at` forks the test process itself. That deadlocks for a
command using a library with a thread pool that the test process had used
already: polars, under Anonymeter's attacks in ``lunar synth``'s release step,
because a fork copies the pool's state but not its threads. So
:func:`killed_in_clean_child` asks a server (this file, run as a script) that
imports recworld and Anonymeter, the modules ``lunar synth`` imports on its way
and wordfreq's list, and loads Presidio's spaCy model once (about 15 s), never
runs a command itself, and forks one child per request: each starts clean and warm.

(multiprocessing's ``forkserver`` would do the forking, but on Python 3.11 it
ignores the parent's ``sys.path`` when it imports its preload modules, and skips
the ones it cannot find without a word.)

The protocol is one JSON line per request on the server's stdin (``point``,
``nth``, ``argv``, ``env``, ``cwd``, ``exchange``) and one exit code per line
on its stdout. Module state patched in the test process does not cross over:
the environment, the working folder and whether swaps may use ``renameat2``
come with the request.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
from typing import Any, NoReturn

from helpers import child_env
from helpers.security.forked import exit_with
from helpers.security.kills import kill_hook


def _run(spec: dict[str, Any]) -> int:
    """In the forked child: the command of ``spec``, killed at its ``nth`` passage of ``point``."""
    from recworld.cli import main
    from recworld.io import fault_hook
    from recworld.io import swap as swap_module

    os.environ.clear()
    os.environ.update(spec["env"])
    os.chdir(spec["cwd"])
    swap_module.USE_EXCHANGE = bool(spec["exchange"])
    with fault_hook(kill_hook(str(spec["point"]), int(spec["nth"]))):
        return main([str(a) for a in spec["argv"]])


def _child(spec: dict[str, Any]) -> NoReturn:
    os.dup2(2, 1)  # the command's stdout must not mix with the replies
    exit_with(lambda: _run(spec), 3)


def _warm() -> None:
    """Import and load, once, what each child would otherwise import and load anew (seconds a child)."""
    import aiohttp  # noqa: F401
    import pandas  # noqa: F401
    import presidio_anonymizer  # noqa: F401
    import pyarrow  # noqa: F401

    import recworld.console.app
    import recworld.lunar.cli.progress
    import recworld.lunar.synth.plan
    import recworld.models.openai_compat
    import recworld.models.scripted  # noqa: F401
    from recworld.lunar.leaks import kinds
    from recworld.lunar.privacy import freetext

    kinds.zipf("the")  # wordfreq's English list
    freetext.analyzer().analyze(text="Ann Lee lives in Paris.", language="en")  # spaCy's first pass


def serve() -> None:
    import recworld.cli  # noqa: F401  (what every child runs)

    _warm()
    import numba

    numba.config.DISABLE_JIT = True  # type: ignore[attr-defined]  # as privacy.attack sets it first
    import anonymeter.evaluators  # noqa: F401  (importing polars starts no pool; running it would)

    replies = os.fdopen(os.dup(1), "w")
    print("ready", file=replies, flush=True)
    for line in sys.stdin:
        spec = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(spec)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), file=replies, flush=True)


_server: subprocess.Popen[str] | None = None


def _started() -> subprocess.Popen[str]:
    global _server
    if _server is None or _server.poll() is not None:
        _server = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        assert _server.stdout is not None and _server.stdout.readline().strip() == "ready"
        atexit.register(_server.communicate)  # its stdin closes: it ends after the last request
    return _server


def killed_in_clean_child(point: str, nth: int, argv: list[object], *, exchange: bool) -> int:
    """The exit code of ``argv`` run in a clean child killed at the ``nth`` passage of ``point``."""
    server = _started()
    assert server.stdin is not None and server.stdout is not None
    spec = {
        "point": point,
        "nth": nth,
        "argv": [str(a) for a in argv],
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "exchange": exchange,
    }
    server.stdin.write(json.dumps(spec) + "\n")
    server.stdin.flush()
    reply = server.stdout.readline()
    assert reply.strip(), f"the kill server ended (exit {server.wait()}); its traceback is above"
    return int(reply)


if __name__ == "__main__":
    serve()
