"""Run the installed ``recworld`` entry point the way a person does: a subprocess, 80 columns, no TTY."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

RECWORLD = Path(sys.executable).parent / "recworld"

Recworld = Callable[..., subprocess.CompletedProcess[str]]


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The caller's environment at 80 columns, without colour, with ``home`` as RECWORLD_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECWORLD_")}
    return {**env, "COLUMNS": "80", "LINES": "40", "RECWORLD_HOME": str(home), "NO_COLOR": "1", **extra}
