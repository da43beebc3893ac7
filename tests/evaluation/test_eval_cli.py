"""``recworld eval`` as a person runs it: the real entry point, a subprocess, 80 columns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _runner_fakes import write_suite

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cli"))
from cli_helpers import RECWORLD, cli_env

COUNTS = {"kg_movie_genre": 3, "mem_item_item": 2}


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return write_suite(tmp_path / "suite", COUNTS)


def recworld(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RECWORLD), *args],
        cwd=cwd,
        env=cli_env(cwd / "home"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "popularty"], "did you mean 'popularity'"),
        (["--model", "scripted", "--variant", "few-shot"], "unknown prompt variant 'few-shot'"),
        (["--model", "openai:x", "--model-option", "batch_szie=2"], "has no option 'batch_szie'"),
        (["--model", "scripted", "--measures", "kg_movie_casts"], "kg_movie_casts"),
        (["--model", "scripted", "--model", "popularty"], "did you mean 'popularity'"),  # the 2nd model too
    ],
)
def test_a_bad_input_creates_nothing(suite: Path, args: list[str], says: str) -> None:
    result = recworld(suite.parent, "eval", str(suite), *args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("recworld: error: ") and says in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert not (suite / "runs").exists()


def test_dry_run_counts_prompts_and_cost_and_writes_nothing(suite: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.jsonl"
    prices.write_text('{"model": "scripted", "input": 1000, "output": 2000}\n')
    result = recworld(
        suite.parent, "eval", str(suite), "--model", "scripted", "--dry-run", "--limit", "2",
        "--system", "Be brief.", "--prices", str(prices),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "kg_movie_genre\t2\t" in out and "mem_item_item\t2\t" in out  # piped: a plain table
    assert "total: 4 requests, at most $" in out
    assert "--- first prompt of kg_movie_genre ---" in out and "[system]\nBe brief." in out
    assert "History movie 0" in out  # the rendered question itself
    assert "nothing was sent and nothing was written" in out
    assert not (suite / "runs").exists()


def test_json_summary_and_a_log_file(suite: Path) -> None:
    result = recworld(suite.parent, "eval", str(suite), "--model", "scripted", "--json")
    assert result.returncode == 0, result.stderr
    runs = json.loads(result.stdout)["runs"]  # stdout holds the JSON and nothing else
    assert [r["model"] for r in runs] == ["scripted"]
    assert runs[0]["measures"]["kg_movie_genre"]["n"] == 3 and runs[0]["counts"]["questions"] == 5
    run_dir = Path(runs[0]["run_dir"])
    assert "5 to send" in (run_dir / "recworld.log").read_text()


def test_config_file_runs_several_models_and_is_recorded(suite: Path, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"*": "A"}')
    config = tmp_path / "eval.toml"
    config.write_text(
        f'limit = 1\ntemperature = 0.3\n\n[[models]]\nspec = "scripted"\n\n'
        f'[[models]]\nspec = "scripted:{script}"\ntemperature = 0.7\nsystem = "You are terse."\n'
    )
    result = recworld(suite.parent, "eval", str(suite), "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("run: ") == 2
    headers = [json.loads(p.read_text()) for p in sorted((suite / "runs").glob("*/run.json"))]
    assert len(headers) == 2
    by_model = {h["model"]: h for h in headers}
    assert by_model["scripted"]["config"]["temperature"] == 0.3  # the file's top level
    assert by_model[f"scripted:{script}"]["config"]["temperature"] == 0.7  # the model's own entry
    assert by_model[f"scripted:{script}"]["config"]["system"] == "You are terse."
    assert all(h["config"]["config_file"] == str(config.resolve()) for h in headers)
    assert all(h["counts"]["questions"] == 2 for h in headers)  # limit 1 per measure


def test_a_bad_config_file_names_file_and_field(suite: Path, tmp_path: Path) -> None:
    config = tmp_path / "eval.toml"
    config.write_text('[[models]]\nspec = "scripted"\ntemperature = 5\n')
    result = recworld(suite.parent, "eval", str(suite), "--config", str(config))
    assert result.returncode == 2
    assert str(config) in result.stderr and "models.0.temperature" in result.stderr
    assert not (suite / "runs").exists()


def test_repeated_model_with_out_is_refused(suite: Path) -> None:
    result = recworld(
        suite.parent, "eval", str(suite), "--model", "scripted", "--model", "random", "--out", "x"
    )
    assert result.returncode == 2 and "--out names one run folder" in result.stderr
