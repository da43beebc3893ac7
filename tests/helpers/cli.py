"""Run ``recworld`` the way a person does: 80 columns, no TTY, in process or as the installed script.

:func:`run_in_process` calls ``recworld.cli.main`` (what the installed script calls) with the
environment of :func:`cli_env`: use it unless the subprocess is the point (a signal, the script
itself, the environment a child inherits). ``RECWORLD`` is the installed script for those.
"""

from __future__ import annotations

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


def run_in_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cwd: Path, *args: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``recworld ARGS`` from ``cwd`` in this process, with :func:`cli_env` (``cwd/home``: RECWORLD_HOME)."""
    for key in [k for k in os.environ if k.startswith("RECWORLD_")]:
        monkeypatch.delenv(key)
    for key, value in cli_env(cwd / "home", **extra).items():
        if key.startswith("RECWORLD_") or key in ("COLUMNS", "LINES", "NO_COLOR", *extra):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(["recworld", *args], code, captured.out, captured.err)
