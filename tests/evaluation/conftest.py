"""The evaluation tests reuse the runner tests' fake suite and fake OpenAI server."""

from __future__ import annotations

import sys
from pathlib import Path

_RUNNER_TESTS = str(Path(__file__).resolve().parent.parent / "runner")
if _RUNNER_TESTS not in sys.path:
    sys.path.insert(0, _RUNNER_TESTS)
