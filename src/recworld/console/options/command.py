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

    def build(self, **values: Any) -> Any:
        """The config itself: the given values over the config's defaults, plus ``values``.

        ``values`` are what the command holds itself (its arguments: ``root=root``),
        by field name at the top level. A bad value is one ConfigError naming its flag.
        """
        from recworld.console.options.files import build

        return build(self.config, {**self.nested(), **values})


@dataclass(frozen=True)
class OptionsUse:
    """What :func:`with_options` gave one command: read back by the check that every field is a flag."""

    config: type[BaseModel]
    exclude: tuple[str, ...]
    flags: Mapping[str, Any]
    options: tuple[OptionField, ...]


USES = "__recworld_options__"  # the attribute of a command that lists its OptionsUse, outermost last


def options_uses(command: Callable[..., Any]) -> tuple[OptionsUse, ...]:
    """The :class:`OptionsUse` of every :func:`with_options` on ``command`` (empty: it used none)."""
    return tuple(getattr(command, USES, ()))


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
    required: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A typer command decorator: add every setting of ``config`` as an option.

    The command keeps its own parameters (arguments) and gets one more, named
    ``given``: a :class:`Given` of the settings typed on the command line
    (``given.build(...)`` is the config). Every generated option defaults to "not
    given", so a file value or the config's default can come through.

    ``required``: for a command that reads no config file, a field without a
    default is a required option (typer's own "missing option '--dataset'").
    ``exclude`` names fields the command sets itself (its arguments).
    Decorators stack: a command may take the settings of two configs (``given`` names differ).
    """
    options = [o for o in option_fields(config, exclude=exclude, flags=flags) if o.cli]
    use = OptionsUse(config, tuple(exclude), dict(flags or {}), tuple(options))

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
                default=... if required and o.required else None,
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
        setattr(wrapper, USES, (*options_uses(command), use))
        del wrapper.__wrapped__  # typer must read the signature above, not the command's
        return wrapper

    return decorate


def _typer_option(option: OptionField) -> Any:
    import typer

    declared = option.flag
    if option.annotation is bool:  # a switch: --progress/--no-progress, "not given" when neither
        declared = f"{option.flag}/{option.negative or '--no-' + option.flag.removeprefix('--')}"
    return typer.Option(
        declared, *option.aliases, help=option.help or None, metavar=option.metavar, show_default=False
    )
