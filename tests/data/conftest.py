"""Fixture folders for the data tests (writers live in data_writers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.data_writers import write_ml1m, write_ml25m, write_ml100k, write_recbole


@pytest.fixture
def ml100k_dir(tmp_path: Path) -> Path:
    return write_ml100k(tmp_path / "ml-100k")


@pytest.fixture
def recbole_dir(tmp_path: Path) -> Path:
    return write_recbole(tmp_path / "tiny")


@pytest.fixture
def ml1m_dir(tmp_path: Path) -> Path:
    return write_ml1m(tmp_path / "ml-1m")


@pytest.fixture
def ml25m_dir(tmp_path: Path) -> Path:
    return write_ml25m(tmp_path / "ml-latest-small")
