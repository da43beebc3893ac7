"""A run's settings are its identity: another --system or --max-tokens is another run, and reuses nothing.

A scripted model that counts its requests shows what was asked again. Settings
that never change an answer (concurrency, timeouts, retries, the failure
threshold) are not identity: changing them resumes the same run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.eval_support import oracle, read_jsonl
from helpers.runner_fakes import write_suite
from recworld.evaluation import EvalConfig, evaluate_config
from recworld.evaluation.config import default_run_dir
from recworld.models.scripted import ScriptedModel

COUNTS = {"kg_movie_genre": 3, "mem_item_item": 2}
TOTAL = sum(COUNTS.values())


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "80")
    return write_suite(tmp_path / "suite", COUNTS)


def eval_args(suite: Path, *extra: str) -> list[str]:
    return ["eval", str(suite), "--model", "scripted", "--no-progress", "--json", *extra]


def test_another_system_or_max_tokens_is_a_new_run_that_reuses_no_answer(suite: Path) -> None:
    base = EvalConfig(suite_dir=suite, model="scripted")
    counting = ScriptedModel(oracle)
    first = evaluate_config(base, model=counting)
    assert len(counting.calls) == TOTAL
    variants = [
        base.model_copy(update={"system": "You are a movie expert."}),
        base.model_copy(update={"max_tokens": 8}),
        base.model_copy(update={"temperature": 0.7}),
        base.model_copy(update={"seed": 5}),
    ]
    folders = {first.run_dir}
    for config in variants:
        fresh = ScriptedModel(oracle)
        result = evaluate_config(config, model=fresh)
        assert len(fresh.calls) == TOTAL, config.differing()  # not one answer reused
        assert result.header.counts.resumed == 0 and result.run_dir not in folders
        folders.add(result.run_dir)
    # The first run is untouched: its samples were all asked without a system prompt.
    assert all(s["prompt"][0]["role"] == "user" for s in read_jsonl(first.run_dir / "samples.jsonl"))
    # Rerunning each resumes its own folder and sends nothing.
    again = ScriptedModel(oracle)
    for config in [base, *variants]:
        assert evaluate_config(config, model=again).header.counts.resumed == TOTAL
    assert again.calls == []


def test_the_cli_names_each_run_and_records_what_differs(suite: Path) -> None:
    plain = run_recworld(*eval_args(suite))
    other = run_recworld(*eval_args(suite, "--system", "Be brief.", "--max-tokens", "8"))
    assert plain.returncode == other.returncode == 0, other.stderr
    plain_dir = Path(json.loads(plain.stdout)["runs"][0]["run_dir"])
    other_run = json.loads(other.stdout)["runs"][0]
    other_dir = Path(other_run["run_dir"])
    assert plain_dir.name == "scripted__generate__zero-shot"
    assert other_dir.name.startswith("scripted__generate__zero-shot__") and len(other_dir.name) == len(
        "scripted__generate__zero-shot__" + "0" * 8
    )
    header = json.loads((other_dir / "run.json").read_text())
    assert header["settings"] == {"system": "Be brief.", "max_tokens": 8}
    assert header["label"] == "max_tokens=8, system='Be brief.'"  # declaration order
    assert other_run["label"] == header["label"]
    samples = read_jsonl(other_dir / "samples.jsonl")
    assert len(samples) == TOTAL and all(
        s["prompt"][0] == {"role": "system", "content": "Be brief."} for s in samples
    )
    # The default max_tokens said out loud (16 for zero-shot) is the default run, not a new one.
    same = run_recworld(*eval_args(suite, "--max-tokens", "16"))
    assert Path(json.loads(same.stdout)["runs"][0]["run_dir"]) == plain_dir
    assert json.loads(same.stdout)["runs"][0]["counts"]["resumed"] == TOTAL


def test_operational_settings_resume_the_same_run(suite: Path) -> None:
    base = EvalConfig(suite_dir=suite, model="scripted", limit=1)
    first = evaluate_config(base, model=ScriptedModel(oracle))
    faster = base.model_copy(
        update={
            "runner": base.runner.model_copy(update={"concurrency": 2, "timeout_s": 5.0, "max_retries": 1}),
            "fail_on_error": 0.5,
            "progress_every": 1.0,
            "limit": None,
        }
    )
    model = ScriptedModel(oracle)
    result = evaluate_config(faster, model=model)
    assert result.run_dir == first.run_dir and result.header.counts.resumed == 2
    assert len(model.calls) == TOTAL - 2  # only the questions the first --limit 1 left out


def test_out_onto_a_run_with_other_settings_is_refused(suite: Path) -> None:
    out = suite / "mine"
    assert run_recworld(*eval_args(suite, "--out", str(out))).returncode == 0
    refused = run_recworld(*eval_args(suite, "--out", str(out), "--system", "Be brief."))
    assert refused.returncode == 2
    assert refused.stderr == (
        f"recworld: error: {out} holds a run with other settings: --system is None there and "
        "'Be brief.' here; give another --out (each set of settings is its own run, so answers are "
        "never mixed)\n"
    )
    header = json.loads((out / "run.json").read_text())
    assert header["config"]["system"] is None and header["status"] == "finished"  # left as it was


def test_a_model_option_is_identity_and_is_named(suite: Path) -> None:
    base = EvalConfig(suite_dir=suite, model="openai:m")
    with_option = EvalConfig.model_validate(
        {
            "suite_dir": suite,
            "model": "openai:m",
            "backend": {"options": {"max_tokens_param": "max_completion_tokens"}},
        }
    )
    assert default_run_dir(base) != default_run_dir(with_option)
    assert with_option.differing() == {"model_options": {"max_tokens_param": "max_completion_tokens"}}
    moved = base.model_copy(
        update={"backend": base.backend.model_copy(update={"base_url": "http://127.0.0.1:9/v1"})}
    )
    assert default_run_dir(moved) == default_run_dir(base)  # a server on another port serves the same run
