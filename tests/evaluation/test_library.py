"""``recworld.evaluate(suite, model=..., **settings)``: a model object or a spec, keywords named like the CLI.

The docs' "Your own model from Python" example is run here exactly as written.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import recworld
from helpers.eval_support import oracle
from helpers.runner_fakes import write_suite
from recworld.chat import AnswerMode, Request, Response
from recworld.errors import ConfigError, ModelError
from recworld.evaluation import EvalResult, RunFailedError
from recworld.models.scripted import ScriptedModel
from recworld.scoring.records import MetricsRecord

DOCS = Path(__file__).resolve().parents[2] / "docs" / "models.md"
COUNTS = {"kg_movie_genre": 4, "mem_item_item": 3}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", COUNTS)


class Closing(ScriptedModel):
    """A scripted model that records whether anyone closed it."""

    closed = False

    async def aclose(self) -> None:
        self.closed = True


def test_a_model_object_is_evaluated_and_the_result_is_typed(suite: Path, tmp_path: Path) -> None:
    model = Closing(oracle, name="mine")
    result = recworld.evaluate(
        suite, model=model, limit=2, out=tmp_path / "run", concurrency=2, progress=False
    )
    assert isinstance(result, EvalResult) and isinstance(result.metrics, MetricsRecord)
    assert result.run_dir == (tmp_path / "run").resolve() and result.status == "finished"
    assert result.header.model == "scripted:mine" and result.header.config.limit == 2
    assert result.header.config.runner.concurrency == 2
    assert result.header.model_identity == {"backend": "scripted", "model": "mine"}
    assert len(model.calls) == 4 and not model.closed  # the object is the caller's
    assert result.metrics.measures["kg_movie_genre"].n == 2
    assert result.score("kg_movie_genre") == 0.5  # questions 0 and 1: the oracle is right on 0
    assert [s.question_id for s in result.samples()][:2] == [
        "fake/kg_movie_genre/00000",
        "fake/kg_movie_genre/00001",
    ]


def test_a_spec_string_works_the_same_way(suite: Path) -> None:
    result = recworld.evaluate(suite, model="random", limit=1, measures="mem_item_item", progress=False)
    assert result.header.model == "random" and result.header.counts.questions == 1
    assert result.run_dir.name == "random__generate__zero-shot"


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"limt": 2}, "recworld.evaluate(): unknown keyword 'limt' (did you mean 'limit'?)"),
        ({"timeout": 0}, "recworld.evaluate(): keyword 'timeout': Input should be greater than 0"),
        ({"suite_dir": "x"}, "unknown keyword 'suite_dir'"),
        ({"base_url": "http://127.0.0.1:1/v1"}, "base_url: a backend setting applies to a model spec"),
        ({"model_options": {"a": "1"}}, "model_options: a backend setting applies to a model spec"),
    ],
)
def test_bad_keywords_are_one_clear_error(suite: Path, settings: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        recworld.evaluate(suite, model=ScriptedModel(oracle), **settings)
    assert says in str(caught.value)
    assert not (suite / "runs").exists()


def test_something_that_is_not_a_model_is_refused(suite: Path) -> None:
    with pytest.raises(ConfigError, match="expected a spec string or an object with identity"):
        recworld.evaluate(suite, model=object())  # type: ignore[arg-type]


def test_a_failed_run_raises_with_what_it_wrote(suite: Path) -> None:
    def refuse(request: object) -> str:
        raise ModelError("no")

    with pytest.raises(RunFailedError) as caught:
        recworld.evaluate(suite, model=ScriptedModel(refuse), limit=1, progress=False)
    result = caught.value.result
    assert result.status == "too_many_errors" and result.metrics.status == "errored"
    assert caught.value.exit_code == 3


def test_inside_a_running_loop_it_still_runs_and_the_async_form_uses_the_loop(suite: Path) -> None:
    async def cell() -> tuple[EvalResult, EvalResult]:
        blocking = recworld.evaluate(suite, model=ScriptedModel(oracle), limit=1, progress=False)
        awaited = await recworld.evaluate_async(suite, model=ScriptedModel(oracle), limit=2, progress=False)
        return blocking, awaited

    blocking, awaited = asyncio.run(cell())
    assert blocking.run_dir == awaited.run_dir  # the same settings: one run, which the second extends
    assert awaited.header.counts.questions == 4 and awaited.header.counts.resumed == 2


def scored(request: Request) -> Response:
    """An answer with a score per choice: what a loglik or rank answer is made of."""
    return Response(text=request.choices[0], choice_logprobs=tuple(-1.0 for _ in request.choices))


def _claims(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "per-choice scores" in str(w.message)]


def test_a_model_object_whose_answers_claim_an_undeclared_mode_is_warned_about_once(suite: Path) -> None:
    claims = ScriptedModel(scored, name="claims", supports=frozenset({AnswerMode.GENERATE}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = recworld.evaluate(suite, model=claims, limit=2, progress=False)
    assert result.status == "finished" and len(claims.calls) == 4  # a warning, not a failure
    assert _claims(caught) == [
        "model 'scripted:claims' answers with per-choice scores (choice_logprobs: loglik or rank "
        "answers), but its supports declares only generate; declare the modes it serves, or drop the scores"
    ]
    declares = ScriptedModel(scored, name="declares")  # supports every mode: its scores are declared
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        recworld.evaluate(suite, model=declares, limit=1, progress=False)
    assert _claims(caught) == []


def _docs_example() -> str:
    """The section's model and the call that evaluates it (its third block, the contract, runs elsewhere)."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Your own model from Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 3, "the section has the model, its evaluation and its contract test"
    return blocks[0] + blocks[1]


def test_the_docs_example_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_suite(tmp_path / "suites" / "ml100k", {"kg_movie_genre": 25, "mem_item_item": 25, "assoc_rule": 5})
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(_docs_example(), str(DOCS), "exec"), {"__name__": "__notebook__"})
    lines = printed.getvalue().splitlines()
    assert sorted(line.split(":")[0] for line in lines[:2]) == ["kg_movie_genre", "mem_item_item"]
    assert all(" on 20 questions " in line for line in lines[:2])  # limit=20, two measures asked
    assert lines[2] == "finished overlap mine:overlap"
    header = recworld.evaluation.read_run_header(tmp_path / "runs" / "overlap" / "run.json")
    assert header.model_identity == {"backend": "mine", "model": "overlap", "checkpoint": "rules-v1"}


def test_import_recworld_stays_light() -> None:
    code = "import sys, recworld; print(sorted(m for m in sys.modules if m.startswith('recworld.')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['recworld.errors', 'recworld.lazy']"  # lazy: importlib and sys only
    assert "evaluate" in dir(recworld)
