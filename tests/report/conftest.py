"""Fixtures for the report tests: a suite of synthetic runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.synthetic_runs import MOVIE_MEASURES, always_first, make_suite, skilled, write_run


def _write_movie_runs(runs: Path) -> None:
    """Three finished runs (a skilled model, an always-"A" model, popularity) and one unfinished."""
    write_run(
        runs / "gpt",
        model="openai:gpt-4o-mini",
        dataset="ml-100k",
        measures=MOVIE_MEASURES,
        policy=skilled(0.5, miss=0.02),
        seed=1,
    )
    write_run(
        runs / "smol",
        model="llamacpp:smollm2-135m",
        dataset="ml-100k",
        measures=MOVIE_MEASURES,
        policy=always_first(miss=0.1),
        seed=2,
    )
    write_run(
        runs / "pop",
        model="popularity",
        dataset="ml-100k",
        measures=MOVIE_MEASURES,
        policy=skilled(0.2),
        seed=3,
    )
    (runs / "unfinished").mkdir()


@pytest.fixture
def movie_suite(tmp_path: Path) -> Path:
    """A suite with three finished runs and one unfinished run directory."""
    suite = make_suite(tmp_path)
    _write_movie_runs(suite / "runs")
    return suite


@pytest.fixture(scope="module")
def movie_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """The movie suite and its report, written once per test module (charts take a second)."""
    from recworld.report import write_report

    root = tmp_path_factory.mktemp("movie-report")
    suite = make_suite(root)
    _write_movie_runs(suite / "runs")
    return suite, write_report([suite], suite / "report")
