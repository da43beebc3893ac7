"""The config is declared once and stored typed: run.json round-trips it, older versions migrate.

Adding a setting is one field: a subclass of EvalConfig with one more field gets
its flag, its --config key, its run.json field and its place in the run's
identity, with no other edit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import pytest
import typer
from pydantic import Field

from helpers.runner_fakes import write_suite
from recworld.chat import AnswerMode
from recworld.console.app import run as run_app  # on a typer app built here; recworld's own: helpers.cli
from recworld.errors import ConfigError, DataError
from recworld.evaluation import EvalConfig, RunHeader, evaluate_config, read_run_header
from recworld.evaluation.cli import eval_command_for
from recworld.runner import RunnerConfig

DATA = Path(__file__).parent / "data"
COUNTS = {"kg_movie_genre": 2}


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COLUMNS", "80")
    return write_suite(tmp_path / "suite", COUNTS)


def test_a_config_round_trips_typed_through_run_json(suite: Path, tmp_path: Path) -> None:
    config = EvalConfig.model_validate(
        {
            "suite_dir": suite,
            "model": "openai:m",
            "backend": {
                "base_url": "http://127.0.0.1:8000/v1",
                "n_ctx": 2048,
                "options": {"batch_size": "4"},
            },
            "limit": 3,
            "measures": ["kg_movie_genre"],
            "mode": "loglik",
            "seed": 7,
            "system": "Be brief.",
            "temperature": 0.5,
            "runner": {"concurrency": 2, "timeout_s": 9.5},
            "config_file": tmp_path / "eval.toml",
        }
    )
    assert config.runner.seed == config.backend.seed == 7  # one seed
    header = RunHeader(model="openai:m", mode="loglik", variant="zero-shot", suite=str(suite), config=config)
    path = tmp_path / "run.json"
    header.write(path)
    back = read_run_header(path)
    assert back == header and back.config == config
    assert isinstance(back.config.measures, tuple) and back.config.mode is AnswerMode.LOGLIK
    assert isinstance(back.config.config_file, Path) and back.config.backend.options == {"batch_size": "4"}


@pytest.mark.parametrize("name", ["run1.json", "run2.json"])
def test_older_headers_are_migrated_field_by_field(suite: Path, tmp_path: Path, name: str) -> None:
    text = (DATA / name).read_text().replace('"SUITE"', json.dumps(str(suite)))
    path = tmp_path / "run.json"
    path.write_text(text)
    header = read_run_header(path)
    assert header.schema_id == "recworld.run/3" and header.counts.runner.sent == 2
    old = json.loads(text)["config"]
    assert header.config.backend.api_key_env == old["api_key_env"] and header.config.backend.base_url is None
    if name == "run1.json":  # the engine's settings were flat; the runner counters were runner_* keys
        assert header.config.runner.concurrency == 4 and header.config.runner.timeout_s == 60.0
        assert header.settings == {} and header.config.max_tokens == 16
    else:  # run/2: the system prompt and max_tokens that made it its own run are named
        assert header.config.runner.concurrency == 8
        assert header.settings == {"max_tokens": 8, "system": "Be brief."}
        assert header.label == "max_tokens=8, system='Be brief.'"


def test_a_key_the_migration_does_not_know_is_an_error_not_dropped(tmp_path: Path) -> None:
    data = json.loads((DATA / "run2.json").read_text())
    data["config"]["top_p"] = 0.9
    data["counts"]["surprise"] = 1
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"run\.json.*(top_p|surprise)"):
        read_run_header(path)


def test_a_run2_folder_resumes_and_refuses_other_settings(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "old"
    out.mkdir()
    (out / "run.json").write_text((DATA / "run2.json").read_text().replace('"SUITE"', json.dumps(str(suite))))
    quiet = RunnerConfig(progress=False)
    same = EvalConfig(
        suite_dir=suite, model="scripted", out_dir=out, system="Be brief.", max_tokens=8, runner=quiet
    )
    with pytest.raises(ConfigError, match=r"not written by recworld.*--force"):  # no marker yet: not ours
        evaluate_config(same)
    result = evaluate_config(same.model_copy(update={"force": True}))  # the spec, as the run/2 run was made
    assert result.header.schema_id == "recworld.run/3" and result.header.started == "2026-12-01T10:34:30Z"
    assert json.loads((out / "run.json").read_text())["schema"] == "recworld.run/3"
    with pytest.raises(ConfigError, match="--max-tokens is 8 there and 16 here"):
        evaluate_config(same.model_copy(update={"max_tokens": None}))


class WithTopK(EvalConfig):
    """EvalConfig and one new setting, declared the one way a setting is declared."""

    top_k: Annotated[
        int | None, Field(ge=1, le=1000, description="Sample from the K likeliest tokens only.")
    ] = None


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.command("eval")(eval_command_for(WithTopK))
    app.command("other")(lambda: None)  # two commands: "eval" stays a subcommand
    return app


def test_a_new_field_is_a_flag_a_file_key_and_a_run_json_field(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_app(_app(), ["eval", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "--top-k" in help_text and "Sample from the K likeliest tokens only." in help_text
    # The flag: validated with its bound, named as typed.
    assert run_app(_app(), ["eval", str(suite), "--model", "scripted", "--top-k", "0"]) == 2
    assert "invalid value for --top-k: Input should be greater than or equal to 1" in capsys.readouterr().err
    assert run_app(_app(), ["eval", str(suite), "--model", "scripted", "--top-k", "5", "--no-progress"]) == 0
    # The file key, with did-you-mean, from the same declaration.
    toml = tmp_path / "eval.toml"
    toml.write_text('top_kk = 3\n[[models]]\nspec = "scripted"\n')
    assert run_app(_app(), ["eval", str(suite), "--config", str(toml)]) == 2
    assert "unknown key 'top_kk' (did you mean 'top_k'?)" in capsys.readouterr().err
    toml.write_text('top_k = 3\n[[models]]\nspec = "scripted"\n')
    assert run_app(_app(), ["eval", str(suite), "--config", str(toml), "--no-progress"]) == 0
    # The run.json field, and the run's identity: each top_k its own folder.
    headers = {p.parent.name: json.loads(p.read_text()) for p in (suite / "runs").glob("*/run.json")}
    assert sorted(h["config"]["top_k"] for h in headers.values()) == [3, 5]
    assert sorted(h["label"] for h in headers.values()) == ["top_k=3", "top_k=5"]
    back = read_run_header(next((suite / "runs").glob("*/run.json")), WithTopK)
    assert isinstance(back.config, WithTopK) and back.config.top_k in (3, 5)
