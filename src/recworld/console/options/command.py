"""Typer options generated from a config class, and the :class:`Given` a command receives."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel

from recworld.console.options.declare import Flags, OptionField, Path_, option_fields, put_at
from recworld.errors import ConfigError


@dataclass(frozen=True)
class Given:
    """What the user typed for a command's generated options: path -> parsed value, nothing else."""

    config: type[BaseModel]
    values: Mapping[Path_, Any] = field(default_factory=dict)

    def nested(self) -> dict[str, Any]:
        """The given values as the nested dict the config validates."""
        out: dict[str, Any] = {}
        for path, value in self.values.items():
            put_at(out, path, value)
        return out

    def get(self, dotted: str, default: Any = None) -> Any:
        return self.values.get(tuple(dotted.split(".")), default)

    def __contains__(self, dotted: object) -> bool:
        return isinstance(dotted, str) and tuple(dotted.split(".")) in self.values


def _given(options: Sequence[OptionField], raw: Mapping[str, Any]) -> dict[Path_, Any]:
    values: dict[Path_, Any] = {}
    for option in options:
        value = raw.get(option.param)
        if value is None or (isinstance(value, list) and not value):
            continue
        if option.parse is not None:
            try:
                value = option.parse(value)
            except ConfigError as exc:
                raise ConfigError(f"invalid value for {option.flag}: {exc}") from None
        values[option.path] = value
    return values


def with_options(
    config: type[BaseModel],
    *,
    exclude: Sequence[str] = (),
    given: str = "given",
    flags: Flags = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A typer command decorator: add every setting of ``config`` as an option.

    The command keeps its own parameters (arguments, ``--config``, ``--dry-run``)
    and gets one more, named ``given``: a :class:`Given` of the settings typed on
    the command line. Every generated option defaults to "not given", so a file
    value or the config's default can come through.
    """
    options = [o for o in option_fields(config, exclude=exclude, flags=flags) if o.cli]

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = [p for p in inspect.signature(command, eval_str=True).parameters.values() if p.name != given]
        names = {p.name for p in own}
        clash = [o.flag for o in options if o.param in names]
        if clash:
            raise TypeError(f"{command.__name__}: {', '.join(clash)} declared twice")
        generated = [
            inspect.Parameter(
                o.param,
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=Annotated[
                    o.annotation | None,
                    _typer_option(o),
                ],
            )
            for o in options
        ]

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            raw = {o.param: kwargs.pop(o.param, None) for o in options}
            return command(**kwargs, **{given: Given(config, _given(options, raw))})

        params = sorted(own, key=lambda p: p.kind) + generated
        wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {}
        del wrapper.__wrapped__  # typer must read the signature above, not the command's
        return wrapper

    return decorate


def _typer_option(option: OptionField) -> Any:
    import typer

    declared = option.flag
    if option.annotation is bool:  # a switch: --progress/--no-progress, "not given" when neither
        declared = f"{option.flag}/{option.negative or '--no-' + option.flag.removeprefix('--')}"
    return typer.Option(declared, help=option.help or None, metavar=option.metavar, show_default=False)
