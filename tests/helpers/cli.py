"""Run ``recworld`` the way a person does: 80 columns, no TTY, in process or as the installed script.

:func:`run_recworld` is the one in-process road: it calls ``recworld.cli.main`` (what the installed
script calls) and captures what the command prints; :func:`run_in_process` adds the environment of
:func:`cli_env`. Use them unless the subprocess is the point (a signal, the script itself, the
environment a child inherits): ``RECWORLD`` is the installed script for those. A child forked from
a test, whose stderr is a file the parent reads, runs :func:`recworld_exit_code` (output left on
its own streams). No test calls ``main`` itself except ``tests/cli`` tests about ``main``.

Typer's ``CliRunner`` is for a test about a typer app object rather than about ``recworld``: an
app the test builds around the option generator (``tests/cli/test_generated_options.py``,
``test_options_overrides.py``, ``tests/lunar/test_embedder_config.py``), or the LUNAR group rebuilt
after a test registered a context (``tests/lunar/test_context_registry.py``,
``tests/lunar/test_context_roles.py``).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from recworld.cli import main

RECWORLD = Path(sys.executable).parent / "recworld"

Recworld = Callable[..., subprocess.CompletedProcess[str]]


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The caller's environment at 80 columns, without colour, with ``home`` as RECWORLD_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECWORLD_")}
    return {**env, "COLUMNS": "80", "LINES": "40", "RECWORLD_HOME": str(home), "NO_COLOR": "1", **extra}


class _Captured(io.TextIOWrapper):
    """A text stream over bytes, as pytest's own capture is: ``.buffer`` for binary writers, no TTY."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="replace", newline="", write_through=True)

    def text(self) -> str:
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue().decode("utf-8", errors="replace")


def run_recworld(*args: object) -> subprocess.CompletedProcess[str]:
    """The one in-process runner: ``recworld ARGS`` through ``recworld.cli.main``, paths as their text.

    The result is the type a subprocess run gives (exit code, stdout, stderr), so a test can move
    between the two roads without rewriting its assertions. It captures this command's output
    itself (``sys.stdout`` and ``sys.stderr`` replaced for the call), so it needs no fixture and
    serves a module-scoped fixture as well as a test. The environment is the caller's (see
    :func:`as_a_person`).
    """
    argv = [str(a) for a in args]
    out, err = _Captured(), _Captured()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = recworld_exit_code(*argv)
    return subprocess.CompletedProcess(["recworld", *argv], code, out.text(), err.text())


def recworld_exit_code(*args: object) -> int:
    """``recworld ARGS`` through ``recworld.cli.main``, its output left on ``sys.stdout``/``sys.stderr``.

    For a forked child (its stderr a file the parent reads, or a process the parent kills); a test
    in this process uses :func:`run_recworld`, which captures.
    """
    return main([str(a) for a in args])


def as_a_person(monkeypatch: pytest.MonkeyPatch, cwd: Path, **extra: str) -> None:
    """This process's environment as :func:`cli_env` (``cwd/home``: RECWORLD_HOME), working in ``cwd``."""
    for key in [k for k in os.environ if k.startswith("RECWORLD_")]:
        monkeypatch.delenv(key)
    for key, value in cli_env(cwd / "home", **extra).items():
        if key.startswith("RECWORLD_") or key in ("COLUMNS", "LINES", "NO_COLOR", *extra):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(cwd)


def run_in_process(
    monkeypatch: pytest.MonkeyPatch, cwd: Path, *args: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``recworld ARGS`` from ``cwd`` as a person runs it: :func:`as_a_person`, then :func:`run_recworld`."""
    as_a_person(monkeypatch, cwd, **extra)
    return run_recworld(*args)
