"""Fixtures: real MovieLens-100K users as anchors."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest
from filelock import FileLock

from helpers.lunar import lunar_server
from recworld.chat import Request
from recworld.data import Dataset
from recworld.testing.fake_server import FakeOpenAIServer


def _strip(name: str) -> str:
    return name.split(":", maxsplit=1)[0]


@pytest.fixture(scope="session")
def ml100k_small(ml100k_raw: Path) -> Dataset:
    """Three real ML-100K users (all their ratings), read from the RecBole atomic files."""
    inter = pd.read_csv(ml100k_raw / "ml-100k.inter", sep="\t")
    inter.columns = [_strip(c) for c in inter.columns]
    inter = inter[inter["user_id"].isin([1, 2, 3])]
    items = pd.read_csv(ml100k_raw / "ml-100k.item", sep="\t")
    items.columns = [_strip(c) for c in items.columns]
    items = items.rename(columns={"movie_title": "title", "release_year": "year", "class": "genres"})
    items["genres"] = items["genres"].fillna("").str.split(" ")
    items = items[items["item_id"].isin(inter["item_id"])]
    users = pd.read_csv(ml100k_raw / "ml-100k.user", sep="\t", dtype=str)
    users.columns = [_strip(c) for c in users.columns]
    return Dataset.from_frames("ml-100k", "movie", inter, items, users)


@pytest.fixture(scope="session")
def ml100k_saved(ml100k_small: Dataset, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`ml100k_small` saved as a dataset folder: what ``--anchors`` and ``load_anchors`` take."""
    return ml100k_small.save(tmp_path_factory.mktemp("ml100k-small") / "ml")


@pytest.fixture(scope="session")
def irrcac_raw() -> ModuleType:
    """``irrCAC.raw``, the independent Gwet's AC1 implementation the agreement tests compare with.

    irrCAC pins ``scipy==1.12.0`` (and with it numpy < 2, which breaks pyarrow), so it is
    never installed into the venv: its pure-Python package goes into ``tests/.data/irrcac``
    with ``--no-deps`` and runs on the venv's own pandas and scipy.
    """
    target = Path(__file__).resolve().parents[1] / ".data" / "irrcac"
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock", timeout=600):  # parallel workers install it once
        _install_irrcac(target)
    if str(target) not in sys.path:
        sys.path.append(str(target))
    import importlib

    return importlib.import_module("irrCAC.raw")


def _install_irrcac(target: Path) -> None:
    if not (target / "irrCAC").is_dir():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
             "irrCAC==0.4.4"],
            check=True,
        )  # fmt: skip


@pytest.fixture
def openai_server(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[[Callable[[Request], str]], FakeOpenAIServer]]:
    """Start local OpenAI-compatible servers answering with a responder; all stopped at teardown.

    Command-line tests run ``--model openai:NAME --base-url URL`` against one, so the real
    OpenAI backend, Runner and cache run with a responder of the test's choosing.
    """
    # A proxy variable would route 127.0.0.1 through the proxy (and switch the backend transport).
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    started: list[FakeOpenAIServer] = []

    def start(respond: Callable[[Request], str]) -> FakeOpenAIServer:
        started.append(lunar_server(respond).__enter__())
        return started[-1]

    yield start
    for server in started:
        server.__exit__()
