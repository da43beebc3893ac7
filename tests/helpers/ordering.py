"""The order the test modules are collected in: the heaviest first (see :data:`RUN_FIRST`)."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent.parent

# The modules with the most work in a full run (seconds summed per module, make test on 2 cores,
# 2026-12-03), longest first. They are collected first, so under ``--dist loadscope`` (a module
# stays on one worker) the scheduler deals them out before the many short modules and no worker
# ends the run alone on one of them: longest-processing-time-first. The export modules wait for
# the harness venv that make test builds in the background, so they come after the first few.
# ``tests/test_test_names.py`` checks that each path exists.
RUN_FIRST = (
    "security/test_kill_points.py",
    "lunar/test_e2e_model.py",
    "evaluation/test_ray_engine.py",
    "lunar/test_smollm2_grammar.py",
    "export/test_cross_harness.py",
    "security/test_export_injection.py",
    "lrworld/test_measure_fidelity.py",
    "security/test_runs_together.py",
    "lunar/test_release_gate.py",
    "mining/test_neumf.py",
    "models/test_model_contract.py",
    "models/test_llamacpp.py",
    "security/test_swaps.py",
    "security/test_review3_io.py",
    "security/test_key_leaks.py",
    "data/test_malformed.py",
)


def run_first_rank(item: pytest.Item) -> int:
    """Where ``item``'s module stands in :data:`RUN_FIRST` (every other module after, in its order)."""
    relative = Path(str(item.path)).relative_to(TESTS).as_posix()
    return RUN_FIRST.index(relative) if relative in RUN_FIRST else len(RUN_FIRST)
