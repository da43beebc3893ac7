"""An embedder is configured like every model: ``EmbedderConfig`` nests ``ModelConfig`` and ``RunnerConfig``.

Its flags come from the same generator as the chat models' (``--embedder-option``,
``--memory-embedder-option`` beside ``--model-option``), a backend option reaches the
embedder the spec makes, a mistyped one is one config error naming it, and the flat
keywords older code and runs used still read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from recworld.errors import ConfigError
from recworld.lunar.cli.flags import session_roles
from recworld.lunar.cli.options import LunarCommand, context_flag, lunar_options
from recworld.lunar.cli.stages import QUERIES_EMBEDDER
from recworld.lunar.config import LunarEvalConfig, QueriesConfig
from recworld.lunar.llm.config import EMBED_RUNNER, EmbedderConfig
from recworld.lunar.llm.embed import open_embedder
from recworld.models import ModelConfig
from recworld.models.scripted import ScriptedEmbedder
from recworld.runner import RunnerConfig

LOOPBACK = "http://127.0.0.1:9/v1"


def _built(config: type[Any], argv: list[str], **decorator: Any) -> Any:
    """The stage config the generated options build from ``argv`` (the stage itself is not run)."""
    app = typer.Typer()
    built: list[Any] = []

    @app.command()
    @lunar_options(config, exclude=["root"], **decorator)
    def stage(given: LunarCommand[Any]) -> None:
        built.append(given.build(config, root=Path("/nonexistent")))

    result = CliRunner().invoke(app, argv)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return built[0]


def _queries(argv: list[str]) -> QueriesConfig:
    decorator = {"roles": session_roles(judge=False), "flags": QUERIES_EMBEDDER}
    built: QueriesConfig = _built(QueriesConfig, ["--model", "scripted", *argv], **decorator)
    return built


def test_embedder_options_and_server_come_from_the_generated_flags() -> None:
    argv = ["--embedder", "openai:e", "--embed-base-url", LOOPBACK, "--embed-api-key-env", "EMBED_KEY"]
    argv += ["--embedder-option", "dimensions=256", "--allow-insecure-http"]
    config = _queries(argv)
    assert config.embedder is not None
    embedder = config.embedder
    assert (embedder.model, embedder.backend.base_url, embedder.backend.api_key_env) == (
        "openai:e",
        LOOPBACK,
        "EMBED_KEY",
    )
    assert embedder.backend.options == {"dimensions": "256"}  # typed when the embedder is made
    # A shared flag reaches the embedder as it reaches the model, by the same rule.
    assert embedder.backend.allow_insecure_http and config.llm.backend.allow_insecure_http
    with open_embedder(embedder, None) as opened:  # the option reached the embedder the spec made
        assert opened.identity["dimensions"] == "256"


def test_device_reaches_a_sentence_transformer_embedders_options() -> None:
    config = _queries(["--embedder", "st:some/model", "--embedder-option", "device=cpu"])
    assert config.embedder is not None and config.embedder.backend.options == {"device": "cpu"}
    assert _queries([]).embedder is None  # no --embedder: the optional embedder stays off
    assert _queries(["--embed-base-url", LOOPBACK]).embedder is None


def test_a_mistyped_embedder_option_is_one_config_error_naming_it_and_the_backend() -> None:
    config = _queries(["--embedder", "openai:e", "--embedder-option", "dimensons=256"])
    assert config.embedder is not None
    with pytest.raises(ConfigError, match="dimensons") as caught, open_embedder(config.embedder, None):
        pass
    assert "openai" in str(caught.value)


def test_the_memory_embedder_has_its_own_options_and_gets_shared_runner_settings() -> None:
    argv = ["--model", "scripted", "--judge", "scripted", "--memory-embedder", "openai:m"]
    argv += ["--memory-embedder-option", "dimensions=64", "--embedder-option", "dimensions=32"]
    argv += ["--embedder", "openai:r", "--timeout", "9"]
    decorator = {
        "roles": session_roles(judge=True),
        "flags": {"contexts": context_flag()},
        "contexts": True,
    }
    config: LunarEvalConfig = _built(LunarEvalConfig, argv, **decorator)
    memory_embedder = config.roles["memory_embedder"]
    assert isinstance(memory_embedder, EmbedderConfig) and memory_embedder.model == "openai:m"
    assert memory_embedder.backend.options == {"dimensions": "64"}
    assert config.embedder.backend.options == {"dimensions": "32"}
    # --timeout reaches every model and embedder; what was not typed keeps the embedder's defaults.
    for embedder in (config.embedder, memory_embedder):
        assert embedder.runner.timeout_s == 9
        assert embedder.runner.max_retries == EMBED_RUNNER.max_retries and not embedder.runner.progress


def test_the_flat_form_of_older_code_and_runs_reads_into_the_nested_one() -> None:
    flat = EmbedderConfig(spec="openai:e", base_url=LOOPBACK, api_key_env="K", timeout_s=5, max_retries=2)
    nested = EmbedderConfig(
        model="openai:e",
        backend=ModelConfig(base_url=LOOPBACK, api_key_env="K"),
        runner=RunnerConfig(timeout_s=5, max_retries=2, progress=False),
    )
    assert flat == nested and flat.name == "openai:e"
    assert EmbedderConfig.model_validate_json(flat.model_dump_json()) == flat
    assert EmbedderConfig(runner={"timeout_s": 5}).runner.progress is False  # over EMBED_RUNNER


def test_an_embedder_object_is_the_one_model_field_and_is_recorded_by_its_identity() -> None:
    embedder = ScriptedEmbedder(name="words")
    config = EmbedderConfig(model=embedder)
    assert config == EmbedderConfig.of(embedder) == EmbedderConfig(instance=embedder)
    assert config.model is embedder and config.name == "scripted:words"
    assert config.model_dump()["model"] == "scripted:words"  # the object itself is never written
    with pytest.raises(ValueError, match="embedder spec string or an embedder object"):
        EmbedderConfig(model=3)
