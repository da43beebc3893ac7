"""evaluate_config(): files, selection, resume and errors, with a scripted model object on a tiny fake suite.

The model is handed in (``evaluate_config(config, model=...)``), never patched into the registry.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.eval_support import config, evaluate_with, oracle, read_jsonl, stable
from helpers.runner_fakes import write_suite
from recworld.chat import AnswerMode, Request
from recworld.errors import ConfigError, DataError, ModelError
from recworld.evaluation import JOURNAL_NAME
from recworld.evaluation.plan import plan_run
from recworld.models.scripted import ScriptedModel

COUNTS = {"kg_movie_genre": 5, "mem_item_item": 4}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", COUNTS)


def test_run_writes_samples_run_and_metrics(suite: Path) -> None:
    run_dir = evaluate_with(ScriptedModel(oracle), config(suite, seed=3))
    assert run_dir.name.startswith("scripted__generate__zero-shot__")  # seed 3 is not the default
    backend = plan_run(config(suite, seed=3), ScriptedModel(oracle)).model_config()  # a spec loads with it
    assert backend.suite_dir == suite.resolve() and backend.seed == 3
    assert (
        evaluate_with(ScriptedModel(oracle), config(suite))
        == suite.resolve() / "runs" / "scripted__generate__zero-shot"
    )
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert len(samples) == sum(COUNTS.values())
    assert [(s["measure"], s["question_id"]) for s in samples] == sorted(
        (s["measure"], s["question_id"]) for s in samples
    )
    for s in samples:
        number = int(s["question_id"].rsplit("/", 1)[1])
        assert s["schema"] == "recworld.sample/2" and s["model"] == "scripted" and s["error"] is None
        assert s["correct"] is (number % 2 == 0)
        assert s["missed"] is (number % 2 == 1)
        assert s["parsed_index"] == (s["answer_index"] if number % 2 == 0 else None)
        assert len(s["labels"]) == (4 if s["format"] == "mcq" else 10)
        assert s["prompt"] and s["prompt"][-1]["role"] == "user"
    run = json.loads((run_dir / "run.json").read_text())
    assert run["schema"] == "recworld.run/3" and run["finished"] >= run["started"]
    assert run["suite_fingerprint"] == "fake-fp" and run["dataset"] == "fake"
    assert run["measures"] == sorted(COUNTS) and run["counts"]["questions"] == 9
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["measures"]["kg_movie_genre"]["correct"] == 3  # questions 0, 2, 4
    assert metrics["measures"]["mem_item_item"]["correct"] == 2


def test_limit_and_measure_selection(suite: Path) -> None:
    model = ScriptedModel(oracle)
    run_dir = evaluate_with(model, config(suite, limit=2, measures=("mem_item_item",)))
    ids = [s["question_id"] for s in read_jsonl(run_dir / "samples.jsonl")]
    assert ids == ["fake/mem_item_item/00000", "fake/mem_item_item/00001"]
    assert len(model.calls) == 2
    with pytest.raises(ConfigError, match="nope"):
        evaluate_with(model, config(suite, measures=("nope",)))


def test_resume_sends_nothing_already_answered(suite: Path) -> None:
    run_dir = evaluate_with(ScriptedModel(oracle), config(suite))
    reference = stable(read_jsonl(run_dir / "samples.jsonl"))
    # A kill after 3 samples were journaled, in the middle of writing the 4th; the
    # cache still holds every response that had arrived.
    journal = run_dir / JOURNAL_NAME
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[:3]) + lines[3][:20])
    for name in ("samples.jsonl", "metrics.json"):
        (run_dir / name).unlink()
    again = ScriptedModel(oracle)
    assert evaluate_with(again, config(suite)) == run_dir
    assert again.calls == []  # every answer came from the journal or the cache
    assert stable(read_jsonl(run_dir / "samples.jsonl")) == reference
    # Without the cache only the questions missing from the journal are sent.
    journal.write_text("".join(lines[:3]))
    (run_dir / "cache.sqlite").unlink()
    third = ScriptedModel(oracle)
    evaluate_with(third, config(suite))
    assert len(third.calls) == len(reference) - 3
    run = json.loads((run_dir / "run.json").read_text())
    assert run["counts"]["resumed"] == 3 and run["counts"]["runner"]["sent"] == len(reference) - 3


def test_failed_samples_are_recorded_then_retried_on_rerun(suite: Path) -> None:
    def broken(request: Request) -> str:
        assert request.question is not None
        if request.question.id.endswith("1"):
            raise ModelError("backend refused this prompt")
        return oracle(request)

    run_dir = evaluate_with(
        ScriptedModel(broken), config(suite, fail_on_error=0.5)
    )  # 2 of 9 fail: under the threshold
    samples = read_jsonl(run_dir / "samples.jsonl")
    failed = {s["question_id"] for s in samples if s["error"]}
    assert failed == {"fake/kg_movie_genre/00001", "fake/mem_item_item/00001"}
    # A failed sample is not scored: neither wrong nor missed.
    assert all(s["response"] is None and s["missed"] is None for s in samples if s["error"])
    fixed = ScriptedModel(oracle)
    evaluate_with(fixed, config(suite))  # fail_on_error is operational: the same run
    assert {r.question.id for r in fixed.calls if r.question} == failed
    assert all(s["error"] is None for s in read_jsonl(run_dir / "samples.jsonl"))


def test_loglik_mode_picks_the_best_scored_choice(suite: Path) -> None:
    run_dir = evaluate_with(ScriptedModel(lambda r: r.choices[2]), config(suite, mode=AnswerMode.LOGLIK))
    assert run_dir.name == "scripted__loglik__zero-shot"
    samples = read_jsonl(run_dir / "samples.jsonl")
    assert all(s["parsed_index"] == 2 and len(s["choice_logprobs"]) == len(s["labels"]) for s in samples)
    assert all(s["correct"] is (s["answer_index"] == 2) for s in samples)


def test_unsupported_mode_is_a_config_error(suite: Path) -> None:
    generate_only = ScriptedModel(oracle, supports=frozenset({AnswerMode.GENERATE}))
    with pytest.raises(ConfigError, match="loglik"):
        evaluate_with(generate_only, config(suite, mode=AnswerMode.LOGLIK))
    assert not (suite / "runs").exists()


def test_bad_question_line_names_file_and_line(suite: Path) -> None:
    path = suite / "questions" / "mem_item_item.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    broken = json.loads(lines[2])
    broken["answer_index"] = 99
    lines[2] = json.dumps(broken) + "\n"
    path.write_text("".join(lines))
    with pytest.raises(DataError, match=r"mem_item_item\.jsonl:3: "):
        evaluate_with(ScriptedModel(oracle), config(suite))


def test_run_dir_of_another_run_is_refused(suite: Path) -> None:
    out = suite / "runs" / "mine"
    evaluate_with(ScriptedModel(oracle), config(suite, out_dir=out))
    write_suite(suite, COUNTS, fingerprint="rebuilt")
    with pytest.raises(ConfigError, match="suite_fingerprint is 'fake-fp' there and 'rebuilt' here"):
        evaluate_with(ScriptedModel(oracle), config(suite, out_dir=out))


def test_the_eval_seed_is_in_every_request(suite: Path) -> None:
    model = ScriptedModel(oracle)
    evaluate_with(model, config(suite, seed=11))
    assert model.calls and {r.seed for r in model.calls} == {11}
    # Another seed is another request: nothing is served from the first run's cache.
    again = ScriptedModel(oracle)
    evaluate_with(
        again, config(suite, seed=12, out_dir=suite / "runs" / "seed12", cache_path=suite / "shared.sqlite")
    )
    evaluate_with(
        again, config(suite, seed=13, out_dir=suite / "runs" / "seed13", cache_path=suite / "shared.sqlite")
    )
    assert len(again.calls) == 2 * sum(COUNTS.values())
