"""Fixtures for export tests: one real ML-100K suite built with ``recworld build``."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import run_recworld

MEASURES = "kg_movie_genre,mem_item_item"
PER_MEASURE = 50  # the cross-harness check compares accuracies over these 50 kg_movie_genre questions


@pytest.fixture(scope="session")
def ml100k_suite(ml100k_fetched: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export-suite") / "suite"
    argv = ["build", "--dataset", str(ml100k_fetched), "--measures", MEASURES]
    ran = run_recworld(*argv, "--per-measure", str(PER_MEASURE), "--seed", "0", "--out", str(out))
    assert ran.returncode == 0, "recworld build failed"
    return out
