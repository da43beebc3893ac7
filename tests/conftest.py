"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep every test's fetched data and caches out of the user's home."""
    home = tmp_path_factory.mktemp("recworld-home")
    monkeypatch.setenv("RECWORLD_HOME", str(home))
    return home
