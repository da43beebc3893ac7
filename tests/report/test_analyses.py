"""The analysis sections, end to end: scripted runs of every variant on a tiny suite, then the report."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from helpers.runner_fakes import fake_answer, write_suite
from recworld.chat import AnswerMode, Request, Response
from recworld.data.dataset import Dataset
from recworld.evaluation import EvalConfig, evaluate_config
from recworld.models.scripted import ScriptedModel
from recworld.report.sections import AnalysisOptions, Price, parse_pairs
from recworld.report.writer import write_report
from recworld.runner import RunnerConfig

COUNTS = {"mem_item_item": 6, "kg_movie_genre": 6}


def _reply(request: Request) -> str | Response:
    assert request.question is not None
    q = request.question
    if request.mode is AnswerMode.RANK:
        scores = [-float(i) for i in range(len(request.choices))]
        scores[fake_answer(request)] = 1.0
        return Response(text="", choice_logprobs=tuple(scores))
    good = len(request.messages) > 1 or int(q.id.split("/")[-1].split("#")[0]) % 2 == 0
    return request.choices[fake_answer(request)] if good else request.choices[0]


def _dataset(suite: Path) -> None:
    """Interactions over the fake suite's option ids: option 0 of each question is popular."""
    rows = []
    for i in range(6):
        for j in range(10):
            for u in range(1 if j else 8):
                rows.append(
                    {"user_id": f"u{u}", "item_id": f"c{i}-{j}", "timestamp": i * 100 + j, "rating": 1.0}
                )
    frame = pd.DataFrame(rows)
    Dataset.from_frames("fake", "movie", frame).save(suite / "dataset")


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    suite = write_suite(tmp_path_factory.mktemp("an") / "suite", COUNTS)
    _dataset(suite)
    for model in ("scripted:small", "scripted:large"):
        for variant, orders, mode in (
            ("zero-shot", 1, "generate"),
            ("few-shot-2", 1, "generate"),
            ("zero-shot", 3, "generate"),
            ("zero-shot", 1, "rank"),
        ):
            if model == "scripted:large" and (variant != "zero-shot" or orders > 1 or mode != "generate"):
                continue
            evaluate_config(
                EvalConfig(
                    suite_dir=suite,
                    model=model,
                    variant=variant,
                    orders=orders,
                    mode=AnswerMode(mode),
                    runner=RunnerConfig(progress=False),
                ),
                model=ScriptedModel(_reply, name=model),
            )
    options = AnalysisOptions(
        pairs=parse_pairs(["scripted:small=scripted:large"]), prices={"scripted:small": Price(1.0, 2.0)}
    )
    return suite, write_report([suite], suite / "report", options=options)


def test_every_analysis_has_a_table_and_a_figure(analysed: tuple[Path, dict[str, Path]]) -> None:
    _, written = analysed
    html = written["html"].read_text()
    for key in (
        "dataset-stats",
        "ranking",
        "variants",
        "orders",
        "answer-distribution",
        "popularity",
        "size",
        "tokens",
        "cost",
        "time",
        "case-study",
    ):
        assert f'<table id="{key}"' in html, key
    assert html.count("<svg") >= 3 + 10  # bars, two position charts, ten analyses
    assert 'id="an-tsne"' in html and "No suite holds a saved NeuMF space" in html


def test_numbers_in_the_analyses(analysed: tuple[Path, dict[str, Path]]) -> None:
    _, written = analysed
    md = written["markdown"].read_text()
    # few-shot answers every question right; zero-shot only the even ones (3 of 6): +100% on both measures,
    # on the 6 shared questions, too few to test (the n is printed instead of a significance mark).
    variants = md.split("### Prompt variants against zero-shot")[1].split("###")[0]
    assert variants.count("1.000 (+100.0%, n=6)") == 2
    # rank mode: the answer always scores highest -> HR@1 = NDCG@10 = 1, no ties.
    ranking = md.split("### Rank mode: full candidate ranking")[1].split("###")[0]
    assert "| 1.000 | 1.000 | 1.000 | 0 |" in ranking
    # three orders, a mean and a variance per measure
    orders = md.split("### Position bias over option orders")[1].split("###")[0]
    assert "| 3 |" in orders
    # the larger model scores the same as the smaller here: +0.0% relative improvement
    assert "+0.0%" in md.split("### Relative improvement of the larger model")[1].split("###")[0]
    # wrong zero-shot picks are option 0, the popular item: no non-popular item among wrong answers
    popularity = md.split("## Popularity bias\n")[1].split("\n#")[0]  # its table is not titled again
    assert "0.0%" in popularity
    assert "$" in md.split("### Cost per measure")[1].split("###")[0]


def test_a_missing_suite_dataset_leaves_suite_analyses_out(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", {"mem_item_item": 2})
    evaluate_config(
        EvalConfig(suite_dir=suite, model="scripted", runner=RunnerConfig(progress=False)),
        model=ScriptedModel(_reply),
    )
    html = write_report([suite], tmp_path / "out")["html"].read_text()
    assert 'id="dataset-stats"' not in html and 'id="popularity"' not in html
    assert '<table id="time"' in html


@pytest.mark.browser
def test_analyses_render_in_chromium(
    analysed: tuple[Path, dict[str, Path]],
    tmp_path: Path,
    chromium: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    _, written = analysed
    dom = chromium("--dump-dom", written["html"].resolve().as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    for key in ("ranking", "variants", "orders", "popularity", "case-study", "time"):
        assert f'<table id="{key}"' in dom.stdout
    assert "Relative change from zero-shot (%)" in dom.stdout  # figure text stays text
    assert "<script src" not in dom.stdout  # the viewer script is inline; nothing loads from outside


def test_variant_and_order_runs_are_not_main_table_rows(analysed: tuple[Path, dict[str, Path]]) -> None:
    from helpers.html_tables import html_tables

    _, written = analysed
    tables = html_tables(written["html"])
    # One row per model and answer mode; the few-shot and 3-order runs have their own tables.
    assert tables["main-fake"].labels() == [
        "RANDOM",
        "scripted:large",
        "scripted:small",
        "scripted:small (rank)",
    ]
    assert [r[1].text for r in tables["variants"].rows] == ["few-shot-2"]
    assert {r[0].text for r in tables["orders"].rows} == {"scripted:small (3 orders)"}
    orders = tables["orders"].rows[0]
    assert tables["orders"].columns[3] == "questions" and orders[3].text == "6"  # questions, not 18 copies
