"""console.options for nested configs shown under a command's own names (what LUNAR's sessions need).

Per-path ``flags`` override a field's own Flag (two nested configs of one class get two names),
and an empty default is not shown as ``(default {})``.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
import typer
from pydantic import ConfigDict, Field
from typer.testing import CliRunner

from recworld.console.options import Flag, Given, build, layered, option_fields, with_options
from recworld.records import Settings as Bounded  # every options class is a bounded Settings one


class Engine(Bounded):
    model_config = ConfigDict(extra="forbid")

    timeout_s: Annotated[float, Field(gt=0, le=3600, description="Seconds per attempt.")] = 120.0
    options: dict[str, Any] = Field(default_factory=dict)


class Session(Bounded):
    model_config = ConfigDict(extra="forbid")

    model: str
    engine: Engine = Engine(timeout_s=900.0)


class Command(Bounded):
    model_config = ConfigDict(extra="forbid")

    answer: Session
    judge: Session


FLAGS = {
    "answer.model": Flag("--model"),
    "judge.model": Flag("--judge"),
    "answer.engine.timeout_s": Flag("--timeout"),
}
HIDDEN = ["judge.engine.timeout_s", "answer.engine.options", "judge.engine.options"]


def test_overrides_name_the_flags_of_nested_paths() -> None:
    options = {o.flag: o for o in option_fields(Command, flags=FLAGS, exclude=HIDDEN)}
    assert set(options) == {"--model", "--judge", "--timeout"}
    assert options["--timeout"].path == ("answer", "engine", "timeout_s")
    assert options["--timeout"].help == "Seconds per attempt (default 120.0)."
    with pytest.raises(TypeError, match="--model is declared by both"):
        option_fields(Command, exclude=HIDDEN)  # without the overrides both models are --model
    assert option_fields(Engine)[1].help == ""  # an empty default is not shown as "(default {})"


def test_generated_options_build_the_nested_config_and_errors_name_the_flag() -> None:
    app = typer.Typer()
    seen: list[Command] = []

    @app.command()
    @with_options(Command, flags=FLAGS, exclude=HIDDEN)
    def run(given: Given) -> None:
        seen.append(build(Command, layered(given.nested(), {"judge": {"engine": {}}})))

    result = CliRunner().invoke(app, ["--model", "a", "--judge", "j", "--timeout", "5"])
    assert result.exit_code == 0, result.output
    (command,) = seen
    assert (command.answer.model, command.answer.engine.timeout_s, command.judge.model) == ("a", 5.0, "j")
    assert command.judge.engine.timeout_s == 120.0
