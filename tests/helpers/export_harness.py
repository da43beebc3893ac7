"""The test-only venv that holds lm-eval, inspect_ai and datasets (RecWorld never imports them).

Invariant: a test that loads an export with a harness runs the installed harness from this
venv, or fails; it never skips and never falls back to a stand-in (a stub package, a
simulated loader).

The venv lives in the git-ignored ``tests/.data/harness-venv``. It is built from the
package index the first time a test needs it (or ahead of the run, by
``scripts/ensure-test-tools.sh``), and then reused while its stamp matches the pins
below. One process builds at a time (a file lock beside the venv), so parallel pytest
workers and concurrent runs share one build; a build that failed half way leaves no
stamp and is redone from scratch. torch is installed first at the version on this
disk's wheel folder, so lm-eval's torch requirement never pulls a multi-GB CUDA build.
The tests then run the harnesses offline (``HF_*_OFFLINE``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from filelock import FileLock

HARNESS_VENV = Path(__file__).resolve().parents[1] / ".data" / "harness-venv"
TORCH = "torch==2.13.0"
PINS = ("lm-eval==0.4.13", "inspect-ai==0.3.285", "datasets==5.2.0")
STAMP_NAME = ".recworld-harness"
BUILD_TIMEOUT_S = 1500


def _base_python() -> str:
    return str(getattr(sys, "_base_executable", sys.executable))


def stamp_text() -> str:
    """What the stamp of a finished build holds: the pins (a venv whose Python is gone has no python)."""
    return "\n".join([TORCH, *PINS]) + "\n"


def venv_python(venv: Path = HARNESS_VENV) -> Path:
    return venv / "bin" / "python"


def is_built(venv: Path = HARNESS_VENV) -> bool:
    stamp = venv / STAMP_NAME
    try:
        return stamp.read_text(encoding="utf-8") == stamp_text() and venv_python(venv).is_file()
    except OSError:
        return False


def _lock(venv: Path) -> FileLock:
    venv.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(venv.parent / f"{venv.name}.lock"), timeout=BUILD_TIMEOUT_S)


def ensure_venv(venv: Path = HARNESS_VENV) -> float:
    """Build (or reuse) the harness venv; the seconds spent building it (0 when it was there).

    Raises ``subprocess.CalledProcessError`` (pip's own message above it) when it cannot be built.
    """
    if is_built(venv):
        return 0.0
    with _lock(venv):
        if is_built(venv):  # another worker or run built it while this one waited
            return 0.0
        started = time.perf_counter()
        (venv / STAMP_NAME).unlink(missing_ok=True)
        subprocess.run([_base_python(), "-m", "venv", "--clear", str(venv)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
        # No bytecode at install time: the tests import a small part of these packages.
        pip = [str(venv_python(venv)), "-m", "pip", "install", "--quiet", "--no-compile"]
        pip += ["--disable-pip-version-check"]
        subprocess.run([*pip, TORCH], check=True, env=env)
        subprocess.run([*pip, *PINS], check=True, env=env)
        (venv / STAMP_NAME).write_text(stamp_text(), encoding="utf-8")
        return time.perf_counter() - started


def offline_env(scratch: Path) -> dict[str, str]:
    """The environment a harness runs in: offline, its caches and logs in ``scratch``, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HOME=str(scratch / "hf"), HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", NO_COLOR="1")
    env.update(INSPECT_LOG_DIR=str(scratch / "inspect-logs"), INSPECT_DISPLAY="none")
    return env


if __name__ == "__main__":  # scripts/ensure-test-tools.sh builds it ahead of the tests
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HARNESS_VENV
    seconds = ensure_venv(target)
    print(f"harness venv {target}: {f'built in {seconds:.0f} s' if seconds else 'already built'}")
