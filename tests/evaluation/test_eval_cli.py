"""``recworld eval`` as a person runs it, in process: errors, dry run, JSON, config files.

``recworld.cli.main`` is the entry point itself (its error style and exit codes
included), so these run in this process; ``tests/cli/test_terminal.py`` keeps one
subprocess check of the installed script.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.runner_fakes import write_suite

COUNTS = {"kg_movie_genre": 3, "mem_item_item": 2}


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    return write_suite(tmp_path / "suite", COUNTS)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "popularty"], "did you mean 'popularity'"),
        (["--model", "scripted", "--variant", "few-shot"], "unknown prompt variant 'few-shot'"),
        (["--model", "openai:x", "--model-option", "batch_szie=2"], "has no option 'batch_szie'"),
        (["--model", "scripted", "--measures", "kg_movie_casts"], "kg_movie_casts"),
        (["--model", "scripted", "--model", "popularty"], "did you mean 'popularity'"),  # the 2nd model too
        (["--model", "scripted", "--model-option", "nokey"], "--model-option: 'nokey' is not KEY=VALUE"),
        (["--model", "scripted", "--prices", "p.jsonl"], "--prices goes with --dry-run"),
    ],
)
def test_a_bad_input_creates_nothing(suite: Path, args: list[str], says: str) -> None:
    ran = run_recworld("eval", str(suite), *args)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.startswith("recworld: error: ") and says in ran.stderr
    assert ran.stderr.count("\n") == 1 and ran.stdout == ""
    assert not (suite / "runs").exists()


def test_dry_run_counts_prompts_and_cost_and_writes_nothing(suite: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.jsonl"
    prices.write_text('{"model": "scripted", "input": 1000, "output": 2000}\n')
    ran = run_recworld(
        "eval", str(suite), "--model", "scripted", "--dry-run", "--limit", "2",
        "--system", "Be brief.", "--prices", str(prices),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert "kg_movie_genre\t2\t" in out and "mem_item_item\t2\t" in out  # piped: a plain table
    assert "total: 4 requests, at most $" in out
    assert "--- first prompt of kg_movie_genre ---" in out and "[system]\nBe brief." in out
    assert "History movie 0" in out  # the rendered question itself
    assert "nothing was sent and nothing was written" in out
    assert not (suite / "runs").exists()


def test_json_summary_and_a_log_file(suite: Path) -> None:
    ran = run_recworld("eval", str(suite), "--model", "scripted", "--json")
    assert ran.returncode == 0, ran.stderr
    runs = json.loads(ran.stdout)["runs"]  # stdout holds the JSON and nothing else
    assert [r["model"] for r in runs] == ["scripted"]
    assert runs[0]["measures"]["kg_movie_genre"]["n"] == 3 and runs[0]["counts"]["questions"] == 5
    run_dir = Path(runs[0]["run_dir"])
    assert "5 to send" in (run_dir / "recworld.log").read_text()


def test_config_file_runs_several_models_and_is_recorded(suite: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"*": "A"}')
    config = tmp_path / "eval.toml"
    config.write_text(
        f'limit = 1\ntemperature = 0.3\nconcurrency = 2\n\n[[models]]\nspec = "scripted"\n\n'
        f'[[models]]\nspec = "scripted:{script}"\ntemperature = 0.7\nsystem = "You are terse."\n'
        "n_ctx = 2048\n"
    )
    ran = run_recworld("eval", str(suite), "--config", str(config), "--concurrency", "3")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count("run: ") == 2
    headers = [json.loads(p.read_text()) for p in sorted((suite / "runs").glob("*/run.json"))]
    assert len(headers) == 2
    by_model = {h["model"]: h for h in headers}
    assert by_model["scripted"]["config"]["temperature"] == 0.3  # the file's top level
    own = by_model[f"scripted:{script}"]
    assert own["config"]["temperature"] == 0.7  # the model's own entry
    assert own["config"]["system"] == "You are terse." and own["config"]["backend"]["n_ctx"] == 2048
    assert own["settings"] == {"temperature": 0.7, "system": "You are terse.", "n_ctx": 2048}
    assert all(h["config"]["runner"]["concurrency"] == 3 for h in headers)  # the command line wins
    assert all(h["config"]["config_file"] == str(config.resolve()) for h in headers)
    assert all(h["counts"]["questions"] == 2 for h in headers)  # limit 1 per measure


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('[[models]]\nspec = "scripted"\ntemperature = 5\n', "[[models]] #1: key 'temperature': "),
        ('timeout = 0\n[[models]]\nspec = "scripted"\n', "eval.toml: key 'timeout': Input should be greater"),
        ('temprature = 0.1\n[[models]]\nspec = "scripted"\n', "unknown key 'temprature' (did you mean"),
        ('[[models]]\nspec = "scripted"\noptions = {a = 1}\n', "did you mean 'model_options'"),
        ("[[models]]\ntemperature = 0.1\n", "[[models]] #1: 'spec' is missing"),
        ('model = "scripted"\n', "unknown key 'model' (did you mean 'models'?)"),
    ],
)
def test_a_bad_config_file_names_file_and_key(suite: Path, tmp_path: Path, toml: str, says: str) -> None:
    config = tmp_path / "eval.toml"
    config.write_text(toml)
    ran = run_recworld("eval", str(suite), "--config", str(config))
    assert ran.returncode == 2
    assert str(config) in ran.stderr and says in ran.stderr, ran.stderr
    assert not (suite / "runs").exists()


def test_repeated_model_with_out_is_refused(suite: Path) -> None:
    ran = run_recworld("eval", str(suite), "--model", "scripted", "--model", "random", "--out", "x")
    assert ran.returncode == 2 and "--out names one run folder" in ran.stderr


def test_the_settings_recworld_eval_could_not_set_before(suite: Path) -> None:
    ran = run_recworld(
        "eval", str(suite), "--model", "scripted", "--n-ctx", "1024", "--n-threads", "2",
        "--allow-insecure-http", "--limit", "1", "--json",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    header = json.loads((Path(json.loads(ran.stdout)["runs"][0]["run_dir"]) / "run.json").read_text())
    assert header["config"]["backend"]["n_ctx"] == 1024 and header["config"]["backend"]["n_threads"] == 2
    assert header["config"]["backend"]["allow_insecure_http"] is True
    assert header["settings"] == {"n_ctx": 1024}  # threads and the http switch never change an answer


def test_analyze_takes_the_eval_settings_from_the_same_declarations(suite: Path, tmp_path: Path) -> None:
    ran = run_recworld(
        "analyze", str(suite), "--model", "scripted", "--variants", "few-shot-1", "--limit", "1",
        "--system", "Be brief.", "--no-progress", "--out", str(tmp_path / "report"),
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    headers = [json.loads(p.read_text()) for p in sorted((suite / "runs").glob("*/run.json"))]
    assert sorted(h["variant"] for h in headers) == ["few-shot-1", "zero-shot"]
    assert all(
        h["config"]["system"] == "Be brief." and h["settings"] == {"system": "Be brief."} for h in headers
    )
    assert (tmp_path / "report" / "report.html").is_file()
    assert (
        run_recworld("analyze", str(suite), "--model", "scripted", "--orders", "3").returncode == 2
    )  # its own choice
