"""Options generated from one typed config: the command line, the file and the errors agree with it."""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

import pytest
import typer
from pydantic import ConfigDict, Field
from typer.testing import CliRunner

from recworld.console.options import (
    Flag,
    Given,
    Nested,
    Operational,
    build,
    comma_list,
    file_keys,
    from_file,
    identity_settings,
    iter_settings,
    key_values,
    layered,
    option_fields,
    with_options,
)
from recworld.errors import ConfigError
from recworld.records import Settings as Bounded  # every options class is a bounded Settings one


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Engine(Bounded):
    model_config = ConfigDict(extra="forbid")

    timeout_s: Annotated[
        float, Field(gt=0, le=3600, description="Seconds per attempt."), Flag("--timeout")
    ] = 120.0
    concurrency: Annotated[int, Field(ge=1, le=4096, description="Requests in flight.")] = 8


class Settings(Bounded):
    model_config = ConfigDict(extra="forbid")

    suite: str = "s"
    limit: Annotated[int | None, Field(ge=1, le=10**9, description="First N questions.")] = None
    colour: Annotated[Colour, Field(description="A colour.")] = Colour.RED
    kind: Annotated[Literal["a", "b"], Field(description="A kind.")] = "a"
    measures: Annotated[
        tuple[str, ...] | None,
        Field(description="Comma-separated ids."),
        Flag(parse=comma_list, cli_type=str),
    ] = None
    options: Annotated[
        dict[str, Any],
        Field(default_factory=dict, description="Backend options."),
        Flag("--model-option", metavar="KEY=VALUE", parse=key_values, cli_type=list[str]),
    ]
    verbose: Annotated[bool, Field(description="Say more.")] = False
    secret_path: Annotated[str | None, Flag(cli=False)] = None
    engine: Engine = Field(default_factory=Engine)


def _app(seen: list[Given]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @with_options(Settings, exclude=["suite"])
    def run(suite: Annotated[str, typer.Argument()], given: Given) -> None:
        seen.append(given)
        typer.echo(build(Settings, layered({"suite": suite}, given.nested())).model_dump_json())

    return app


def test_each_field_is_one_option_with_its_help_and_default() -> None:
    flags = {o.flag: o for o in option_fields(Settings)}
    assert set(flags) >= {"--limit", "--colour", "--kind", "--measures", "--model-option", "--timeout"}
    assert "--secret-path" in flags and not flags["--secret-path"].cli
    assert flags["--timeout"].path == ("engine", "timeout_s")
    assert flags["--timeout"].help == "Seconds per attempt (default 120.0)."
    assert flags["--limit"].help == "First N questions."  # None default: nothing to show
    result = CliRunner().invoke(_app([]), ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "--timeout" in result.output and "Seconds per attempt (default 120.0)." in result.output
    assert "--secret-path" not in result.output
    assert "--suite" not in result.output


def test_only_typed_values_are_given_and_they_reach_the_config() -> None:
    seen: list[Given] = []
    args = ["x", "--timeout", "5", "--measures", "a, b", "--model-option", "k=v", "--colour", "blue"]
    result = CliRunner().invoke(_app(seen), args)
    assert result.exit_code == 0, result.output
    given = seen[0]
    assert given.values == {
        ("engine", "timeout_s"): 5.0,
        ("measures",): ("a", "b"),
        ("options",): {"k": "v"},
        ("colour",): Colour.BLUE,
    }
    built = Settings.model_validate_json(result.output)
    assert built.suite == "x" and built.engine.timeout_s == 5.0 and built.engine.concurrency == 8
    assert built.limit is None and built.options == {"k": "v"} and built.measures == ("a", "b")


def test_a_bad_value_names_the_flag() -> None:
    result = CliRunner().invoke(_app([]), ["x", "--timeout", "0"])
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError)
    assert str(result.exception).startswith("invalid value for --timeout:")
    with pytest.raises(ConfigError, match="--model-option: 'nokey' is not KEY=VALUE"):
        CliRunner().invoke(_app([]), ["x", "--model-option", "nokey"], catch_exceptions=False)


def test_a_file_uses_the_flag_names_and_the_command_line_wins() -> None:
    file = from_file(
        Settings, {"timeout": 30, "concurrency": 2, "measures": "a,b", "limit": 3}, source="f.toml"
    )
    assert file == {"engine": {"timeout_s": 30, "concurrency": 2}, "measures": ("a", "b"), "limit": 3}
    merged = layered({"engine": {"timeout_s": 5.0}}, file, {"limit": 9, "kind": "b"})
    built = build(Settings, merged)
    assert (built.engine.timeout_s, built.engine.concurrency, built.limit, built.kind) == (5.0, 2, 3, "b")


def test_file_errors_name_the_file_and_key_with_a_suggestion() -> None:
    with pytest.raises(ConfigError, match=r"f.toml: unknown key 'timout' \(did you mean 'timeout'\?\)"):
        from_file(Settings, {"timout": 3}, source="f.toml")
    with pytest.raises(ConfigError, match=r"f.toml: key 'concurrency': "):
        build(Settings, from_file(Settings, {"concurrency": 0}, source="f.toml"), source="f.toml")
    assert from_file(Settings, {"models": [1]}, source="f", extra=["models"]) == {"models": [1]}


def test_two_fields_with_one_flag_are_refused() -> None:
    class Twice(Bounded):
        timeout: float = Field(default=1.0, ge=0, le=10)
        engine: Engine = Field(default_factory=Engine)

    with pytest.raises(TypeError, match=r"--timeout is declared by both timeout and engine\.timeout_s"):
        option_fields(Twice)


def test_settings_of_a_built_config_are_listed_with_values() -> None:
    built = Settings(limit=4)
    values = {o.flag: v for o, v in iter_settings(built)}
    assert values["--limit"] == 4 and values["--timeout"] == 120.0


class Backend(Bounded):
    model_config = ConfigDict(extra="forbid")

    url: Annotated[str | None, Field(description="Server URL."), Operational()] = None
    seed: int = Field(default=0, ge=0, le=2**63 - 1)  # the parent sets it
    options: Annotated[
        dict[str, Any],
        Field(description="Backend options."),
        Flag("--model-option", key="model_options", parse=key_values, cli_type=list[str]),
    ] = Field(default_factory=dict)


class Run(Bounded):
    model_config = ConfigDict(extra="forbid")

    suite: Annotated[str, Flag(cli=False, file=False)] = "s"
    seed: Annotated[int, Field(ge=0, le=2**63 - 1, description="The one seed.")] = 0
    system: Annotated[str | None, Field(description="A system prompt.")] = None
    mode: Annotated[Literal["fast", "slow"], Field(description="How.")] = "fast"
    quiet: Annotated[bool, Field(description="Say less.")] = False
    backend: Annotated[Backend, Nested(omit=("seed",))] = Field(default_factory=Backend)
    engine: Annotated[Engine, Operational()] = Field(default_factory=Engine)


def test_nested_omit_flag_key_and_file_only_settings() -> None:
    flags = {o.flag: o for o in option_fields(Run)}
    assert "--seed" in flags and flags["--seed"].path == ("seed",)  # the backend's seed is omitted, no clash
    assert flags["--model-option"].key == "model_options"
    assert flags["--mode"].metavar == "fast|slow"
    assert file_keys(Run) == [
        "seed",
        "system",
        "mode",
        "quiet",
        "url",
        "model_options",
        "timeout",
        "concurrency",
    ]
    with pytest.raises(ConfigError, match=r"f: unknown key 'suite'"):
        from_file(Run, {"suite": "x"}, source="f")
    with pytest.raises(ConfigError, match=r"call\(\): unknown keyword 'sytem' \(did you mean 'system'\?\)"):
        from_file(Run, {"sytem": "x"}, source="call()", noun="keyword")
    with pytest.raises(ConfigError, match=r"call\(\): keyword 'timeout': Input should be greater than 0"):
        build(Run, from_file(Run, {"timeout": 0}, source="call()"), source="call()", noun="keyword")
    assert from_file(Run, {"model_options": {"a": 1}}, source="f") == {"backend": {"options": {"a": 1}}}


def test_a_bool_setting_is_a_switch_with_a_no_form() -> None:
    seen: list[Given] = []
    app = typer.Typer()

    @app.command()
    @with_options(Run)
    def go(given: Given) -> None:
        seen.append(given)

    @app.command()
    def other() -> None:
        pass

    runner = CliRunner()
    assert runner.invoke(app, ["go", "--quiet"]).exit_code == 0
    assert runner.invoke(app, ["go", "--no-quiet"]).exit_code == 0
    assert runner.invoke(app, ["go"]).exit_code == 0
    assert [g.get("quiet") for g in seen] == [True, False, None]  # None: not given, a file may set it


def test_identity_is_every_setting_not_marked_operational() -> None:
    run = Run(system="Be brief.", backend=Backend(url="http://x", options={"k": "v"}))
    assert identity_settings(run) == {
        "suite": "s",
        "seed": 0,
        "system": "Be brief.",
        "mode": "fast",
        "quiet": False,
        "model_options": {"k": "v"},
    }  # the URL and the whole engine are operational


def test_two_file_keys_that_collide_are_refused() -> None:
    class Clash(Bounded):
        model_options: dict[str, Any] = Field(default_factory=dict)
        backend: Backend = Field(default_factory=Backend)

    with pytest.raises(TypeError, match="file key model_options is declared by both"):
        option_fields(Clash)
