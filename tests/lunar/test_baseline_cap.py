"""A capped answer is never judged against the generic baseline's cap without saying so (review U10)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.lunar import make_llm
from helpers.report_folders import RunSpec, read_page, write_folder
from recworld import lunar
from recworld.lunar.queries.rubrics import GENERIC_TOKENS, baseline_note, generic_answer
from recworld.lunar.schemas import Category, Query
from recworld.lunar.store.outputs import EvalRun


@settings(max_examples=100, deadline=None)
@given(cap=st.integers(1, 4096))
def test_the_note_names_both_caps_exactly_when_they_differ(cap: int) -> None:
    note = baseline_note(cap)
    assert (note is None) == (cap == GENERIC_TOKENS)
    if note is not None:
        assert f"{cap} tokens" in note and str(GENERIC_TOKENS) in note


def test_the_generic_answer_is_written_under_its_cap() -> None:
    llm, model = make_llm(lambda r: "a generic answer")
    query = Query(
        query_id="u/q0", user_id="u", text="Any dinner idea?", domains=[Category.DINING], multi_domain=False
    )
    assert asyncio.run(generic_answer(llm, query)) == "a generic answer"
    assert [c.max_tokens for c in model.calls] == [GENERIC_TOKENS]


@pytest.mark.parametrize("cap", [96, GENERIC_TOKENS])
def test_the_runs_row_of_a_capped_eval_says_so(tmp_path: Path, cap: int) -> None:
    root = write_folder(tmp_path, [RunSpec("openai:a", "full", [(3, 3)] * 3, privacy=[4, 4, 4])])
    path = root / "eval" / "openai-a" / "full" / "run.json"
    run = EvalRun.read(path)
    EvalRun.model_validate(
        {**run.to_json(), "config": {**run.config.to_json(), "answer_max_tokens": cap}}
    ).write(path)
    lunar.write_lunar_report(lunar.ReportConfig(root=root))
    (row,) = read_page(root / "report.html").table("runs")
    said = "judged against a generic baseline" in row["settings"]
    assert said == (cap != GENERIC_TOKENS), row["settings"]
