"""``recworld analyze``: the paper's measures per analysis by default, and the cost before the wait."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.runner_fakes import write_suite
from recworld.evaluation import EvalConfig
from recworld.evaluation.analyze import ORDERS, estimate_plans, plan_runs
from recworld.runner import RunnerConfig

COUNTS = {"mem_item_item": 3, "mem_user_user": 4, "kg_movie_genre": 5, "text_logline": 2}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", COUNTS)


def _base(suite: Path, **kwargs: object) -> EvalConfig:
    return EvalConfig(suite_dir=suite, model="scripted", runner=RunnerConfig(progress=False), **kwargs)  # type: ignore[arg-type]


def test_each_analysis_runs_on_the_papers_measures_by_default(suite: Path) -> None:
    plans = {(p.variant, p.orders): p.measures for p in plan_runs(_base(suite), all_variants=True)}
    assert plans[("zero-shot", 1)] is None  # the main table: every measure
    assert plans[("cot", 1)] == ("text_logline", "mem_user_user")  # Fig. 5 and 9
    assert plans[("few-shot-3", 1)] == ("text_logline", "mem_user_user")
    assert plans[("zero-shot", ORDERS)] == ("kg_movie_genre",)  # Tables 6 and 11: the movie KG measures


def test_measures_widen_every_analysis(suite: Path) -> None:
    chosen = ("mem_item_item", "kg_movie_genre", "text_logline")
    plans = plan_runs(_base(suite, measures=chosen), all_variants=True)
    assert {p.measures for p in plans} == {chosen}


def test_a_suite_without_the_papers_measures_runs_them_all(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "other", {"mem_item_item": 2, "assoc_rule": 2})
    plans = plan_runs(_base(suite), all_variants=True)
    assert {p.measures for p in plans} == {None}


def test_the_cost_is_known_before_anything_runs(suite: Path) -> None:
    costs = {(c.variant, c.orders): c for c in estimate_plans(plan_runs(_base(suite), all_variants=True))}
    assert costs[("zero-shot", 1)].requests == sum(COUNTS.values())
    assert costs[("cot", 1)].requests == COUNTS["text_logline"] + COUNTS["mem_user_user"]
    assert costs[("zero-shot", ORDERS)].requests == ORDERS * COUNTS["kg_movie_genre"]
    assert all(c.prompt_tokens > 0 and not c.resumes for c in costs.values())
    assert not (suite / "runs").exists() or not any((suite / "runs").iterdir())  # nothing was written


def test_analyze_prints_its_plan_before_the_first_run(suite: Path) -> None:
    # The registered scripted backend answers every question's first option: a real model spec, no patch.
    ran = run_recworld("analyze", str(suite), "--model", "scripted", "--variants", "cot", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout.splitlines()
    first_run = next(i for i, line in enumerate(out) if line.startswith("== "))
    plan = [line for line in out[:first_run] if line.startswith("plan: ")]
    assert plan[0].startswith("plan: zero-shot, 1 order, 4 measures") and "14 requests" in plan[0]
    assert plan[1].startswith("plan: cot, 1 order, 2 measures (text_logline, mem_user_user): 6 requests")
    assert plan[-1] == f"plan: 2 runs, at most 20 requests, ~{plan[-1].split('~')[1]}"
