"""The ``recworld`` fixture: the real entry point in a subprocess (see cli_helpers.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_helpers import RECWORLD, Recworld, cli_env


@pytest.fixture
def recworld(tmp_path: Path) -> Recworld:
    """``recworld(*args)`` -> CompletedProcess, run in ``tmp_path`` with an empty RECWORLD_HOME."""
    assert RECWORLD.is_file(), f"the entry point is not installed at {RECWORLD}"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = cli_env(tmp_path / "home")
        return subprocess.run(
            [str(RECWORLD), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run
