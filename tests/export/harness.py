"""The test-only venv that holds lm-eval and inspect_ai (RecWorld never imports them).

Built once into ``tests/.data/harness-venv`` and reused while its stamp matches
the pins below. torch is installed first at the version on this disk's wheel
folder, so lm-eval's torch requirement never pulls a multi-GB CUDA build.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

TORCH = "torch==2.13.0"
PINS = ("lm-eval==0.4.13", "inspect-ai==0.3.285", "datasets==5.2.0")
STAMP_NAME = ".recworld-harness"


def stamp_text() -> str:
    return "\n".join([TORCH, *PINS]) + "\n"


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_venv(venv: Path) -> float:
    """Create (or reuse) the harness venv; returns the seconds spent creating it (0 when cached)."""
    stamp = venv / STAMP_NAME
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == stamp_text():
        return 0.0
    started = time.perf_counter()
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(venv_python(venv)), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, TORCH], check=True)
    subprocess.run([*pip, *PINS], check=True)
    stamp.write_text(stamp_text(), encoding="utf-8")
    return time.perf_counter() - started


if __name__ == "__main__":  # pragma: no cover - timing helper
    seconds = ensure_venv(Path(sys.argv[1]))
    print(f"harness venv ready in {seconds:.1f} s")
