"""Fixtures for the LRWorld builder tests: small synthetic datasets with known structure."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.lrworld.datasets import make_movie_dataset
from recworld.data.dataset import Dataset


@pytest.fixture(scope="session")
def toy() -> Dataset:
    return make_movie_dataset()


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "suite"
