"""Every command's options come from its config (issue 26): the checker walks the app and the configs.

For each command of the ``recworld`` app (sub-apps included) it reads which configs
:func:`~recworld.console.options.with_options` gave it, then checks that

* every option the command has was generated from one of them (none declared by hand;
  only the root's global flags, ``--log-level`` and ``--version``, are), and
* every field of each config, nested configs walked on their own here, is one of the
  command's options or deliberately has none: ``NoFlag(reason)``, ``Flag(cli=False)``,
  omitted by the parent's ``Nested``, or named in the command's ``exclude``.

No command or field is listed by name, so a new command or field is checked too.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
import typer
from pydantic import BaseModel, Field

from helpers.cli import run_recworld
from recworld.cli import app
from recworld.console.options import (
    FORCE_HELP,
    Flag,
    Given,
    Nested,
    NoFlag,
    OptionsUse,
    options_uses,
    with_options,
)
from recworld.records import Settings


def _root() -> Any:
    """The click group typer makes of the app (typer vendors its own click: duck-typed here)."""
    return typer.main.get_command(app)


def _is_option(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "option"


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


def _config_class(annotation: Any) -> type[BaseModel] | None:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else None
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _unmarked(
    config: type[BaseModel], params: set[str], exclude: set[str], flags: Mapping[str, Any], prefix: tuple = ()
) -> list[str]:
    """Fields of ``config`` that are neither one of ``params`` (the command's options) nor marked."""
    out: list[str] = []
    for name, info in config.model_fields.items():
        path = (*prefix, name)
        dotted = ".".join(path)
        if name in exclude or dotted in exclude or any(isinstance(m, NoFlag) for m in info.metadata):
            continue
        nested = _config_class(info.annotation)
        if nested is not None:
            omit = next((m.omit for m in info.metadata if isinstance(m, Nested)), ())
            inner = exclude | {f"{dotted}.{o}" for o in omit}
            out += _unmarked(nested, params, inner, flags, path)
            continue
        flag = flags.get(dotted) or next((m for m in info.metadata if isinstance(m, Flag)), Flag())
        if flag.cli and "__".join(path) not in params:
            out.append(dotted)
    return out


def problems(root: typer.Typer) -> list[str]:
    """What the checker finds in ``root``: hand-declared options, config-less commands, unmarked fields."""
    group = typer.main.get_command(root)
    found: list[str] = []
    for name, command in _commands(group):
        uses: tuple[OptionsUse, ...] = options_uses(command.callback) if command.callback else ()
        options = {p.name for p in command.params if _is_option(p) and p.name}
        if not uses:
            found += [f"{name}: no config gives its options"] if options else []
            continue
        generated = {o.param for use in uses for o in use.options}
        found += [f"{name}: --{p} is declared by hand" for p in sorted(options - generated)]
        for use in uses:
            unmarked = _unmarked(use.config, options, set(use.exclude), use.flags)
            found += [f"{name}: {use.config.__name__}.{f} has no flag and no mark" for f in unmarked]
    return found


def test_every_command_option_comes_from_a_config_and_every_field_is_a_flag_or_marked() -> None:
    assert problems(app) == []


def test_the_checker_walks_every_command_of_the_app() -> None:
    group = _root()
    names = {name for name, _ in _commands(group)}
    assert {"build", "describe-images", "report", "data fetch", "lunar annotate", "lunar agreement"} <= names
    configured = [options_uses(c.callback) for _, c in _commands(group) if c.callback]
    assert all(configured), "a command without a config"


class _Toy(Settings):
    kept: Annotated[str, Field(description="A kept setting.")] = "a"
    library: Annotated[str, NoFlag("the library's")] = "b"


def test_the_checker_finds_a_hand_declared_option_and_an_unmarked_field() -> None:
    toy = typer.Typer()

    @toy.command("hand")
    def hand(n: Annotated[int, typer.Option("--n")] = 1) -> None: ...

    @toy.command("generated")
    @with_options(_Toy)
    def generated(*, given: Given) -> None: ...

    @toy.command("extra")
    @with_options(_Toy)
    def extra(m: Annotated[int, typer.Option("--m")] = 1, *, given: Given) -> None: ...

    assert problems(toy) == ["hand: no config gives its options", "extra: --m is declared by hand"]
    # a field the command dropped is found: the same config, its flags not reaching the command
    assert _unmarked(_Toy, set(), set(), {}) == ["kept"]


def test_force_help_is_one_wording_on_every_command() -> None:
    group = _root()
    helps = {
        name: p.help
        for name, command in _commands(group)
        for p in command.params
        if _is_option(p) and "--force" in p.opts
    }
    assert len(helps) >= 8, sorted(helps)  # eval, build, describe-images, report, init, data fetch, lunar ...
    assert set(helps.values()) == {FORCE_HELP}, helps


@pytest.mark.parametrize(
    "argv",
    [
        ["build", "--help"],
        ["describe-images", "--help"],
        ["report", "--help"],
        ["lunar", "annotate", "--help"],
    ],
)
def test_generated_help_renders(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = run_recworld(*argv)
    assert result.returncode == 0, result.stderr
    assert "--force" in result.stdout and FORCE_HELP.split(" (")[0] in result.stdout
