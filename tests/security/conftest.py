"""Fixtures for the security review's cases: a small hostile suite, the fake key, and a file scanner.

The review (``shared/reviews/security.md``) ran every case against the
installed CLI with ``OPENAI_API_KEY=sk-SECAUDIT-...``; these tests do the same
in process (``recworld.cli.main``) unless a subprocess is the point (peak RSS,
an import that must not run code).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.security.commands import World, build_world, lunar_server
from helpers.security.common import KEY
from helpers.security.worlds import write_ml_latest_small


@pytest.fixture
def key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return KEY


@pytest.fixture(scope="session")
def evil_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The review's ``suites/evil``: attack-string titles, 5 questions each of two measures."""
    work = tmp_path_factory.mktemp("evil-suite")
    data = write_ml_latest_small(work / "data" / "evil" / "ml-latest-small", evil_titles=True)
    with _Home(work / "home"):
        argv = ["build", "--dataset", str(data), "--out", str(work / "suite"), "--per-measure", "5"]
        ran = run_recworld(
            *argv, "--measures", "kg_movie_genre,mem_item_item", "--allow-weak-neumf", "--no-progress"
        )
    assert ran.returncode == 0, "recworld build of the evil suite failed"
    return work / "suite"


class _Home:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.old: str | None = None

    def __enter__(self) -> None:
        self.old = os.environ.get("RECWORLD_HOME")
        os.environ["RECWORLD_HOME"] = str(self.path)

    def __exit__(self, *_: object) -> None:
        if self.old is None:
            os.environ.pop("RECWORLD_HOME", None)
        else:
            os.environ["RECWORLD_HOME"] = self.old


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A scratch folder the case runs in (relative paths land here)."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Inputs for every command that writes (:mod:`commands`), with a LUNAR-schema server for the session."""
    root = tmp_path_factory.mktemp("world")
    saved = {name: os.environ.get(name) for name in ("RECWORLD_HOME", "OPENAI_API_KEY")}
    os.environ.pop("OPENAI_API_KEY", None)
    with lunar_server() as server:
        try:
            yield build_world(root, server)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
