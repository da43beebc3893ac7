"""The ``recworld`` fixture: the real entry point, run in this process the way a person runs it.

``recworld.cli.main`` is what the installed script calls (its error style, exit
codes and help formatting included), so calling it here at ``COLUMNS=80``, without
a terminal, shows what a person sees in a fraction of a subprocess's time.
``test_terminal.py`` keeps one subprocess check that the installed script is that
entry point; ``test_interrupt.py`` keeps the one whose point is a real signal.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers.cli import Recworld, cli_env


@pytest.fixture
def recworld(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Recworld:
    """``recworld(*args)`` -> CompletedProcess, run in ``tmp_path`` with an empty RECWORLD_HOME."""
    from recworld.cli import main

    for key, value in cli_env(tmp_path / "home").items():
        if key.startswith("RECWORLD_") or key in ("COLUMNS", "LINES", "NO_COLOR"):
            monkeypatch.setenv(key, value)
    monkeypatch.delenv("RECWORLD_LOG_LEVEL", raising=False)
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(["recworld", *args], code, captured.out, captured.err)

    return run
