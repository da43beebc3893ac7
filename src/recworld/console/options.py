"""Command-line options and config-file keys generated from one typed config: each setting declared once.

A command's settings live on a pydantic config class (``EvalConfig``, ``SessionConfig``,
…). Each field is the one declaration of a setting: its type and bounds, its default,
its help (the field's ``description``), and, where the command line needs more, a
:class:`Flag` in the field's ``Annotated`` metadata::

    class RunnerConfig(Record):
        timeout_s: Annotated[float, Field(gt=0, description="Seconds per request attempt."),
                             Flag("--timeout")] = 120.0

From that class:

* :func:`with_options` adds one typer option per field (nested configs are walked,
  so ``EvalConfig.runner.timeout_s`` is ``--timeout``) to a command, each defaulting
  to "not given", and hands the command a :class:`Given` of what the user typed;
* :func:`from_file` reads a config file's flat keys (the flag names with ``_``:
  ``timeout = 30``, so moving a setting between the two is a copy) into the same
  nested shape, refusing unknown keys with a did-you-mean;
* :func:`layered` merges the layers (command line over file over defaults), and
  :func:`build` validates the result, naming the flag a bad value came from.

``flags`` gives a dotted path its own :class:`Flag`, over the field's (LUNAR's
``--judge-base-url`` for ``judge.backend.base_url``).

inspect_ai's shared ``eval_options`` decorator is the model: one declaration serves
every command that takes the setting.
"""

from __future__ import annotations

import enum
import functools
import inspect
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from recworld.console.suggest import did_you_mean, phrase
from recworld.errors import ConfigError

__all__ = [
    "Flag",
    "Given",
    "OptionField",
    "build",
    "comma_list",
    "from_file",
    "iter_settings",
    "key_values",
    "layered",
    "option_fields",
    "with_options",
]

ConfigT = TypeVar("ConfigT", bound=BaseModel)
Path_ = tuple[str, ...]  # a field's place in the nested config: ("runner", "timeout_s")
Flags = Mapping[str, "Flag"] | None  # a Flag per dotted path, over the fields' own


@dataclass(frozen=True)
class Flag:
    """How one config field shows on the command line; only what differs from the defaults.

    * ``name``: the flag (default ``--field-name``); also the file key, with ``_``.
    * ``help``: default the field's ``description``; "(default X)" is appended.
    * ``metavar``: what the help shows for the value.
    * ``cli``: False keeps the field off the command line (file and library only).
    * ``parse`` and ``cli_type``: a field whose command-line form differs from its
      type, e.g. a comma-separated list (:func:`comma_list`) or ``KEY=VALUE`` pairs
      (:func:`key_values`). ``parse`` turns the raw typer value into the field's.
    * ``default_help``: what the help says the default is, when the field's own
      default is not what a user sees (``None`` meaning "the variant's").
    """

    name: str | None = None
    help: str | None = None
    metavar: str | None = None
    cli: bool = True
    parse: Callable[[Any], Any] | None = None
    cli_type: Any = None
    default_help: str | None = None


@dataclass(frozen=True)
class OptionField:
    """One setting as the command line and a config file see it."""

    path: Path_
    flag: str  # "--timeout"
    help: str
    annotation: Any  # what typer parses
    metavar: str | None
    parse: Callable[[Any], Any] | None
    cli: bool

    @property
    def param(self) -> str:
        """The Python parameter name of the generated option: the path joined by ``__``."""
        return "__".join(self.path)

    @property
    def key(self) -> str:
        """The key of this setting in a flat config file: the flag without dashes, ``_`` for ``-``."""
        return self.flag.lstrip("-").replace("-", "_")


def comma_list(value: Any) -> tuple[str, ...] | None:
    """``"a, b,c"`` (or a list of such strings) -> ``("a", "b", "c")``; empty -> None."""
    parts = [value] if isinstance(value, str) else list(value or ())
    items = tuple(p.strip() for part in parts for p in str(part).split(",") if p.strip())
    return items or None


def key_values(pairs: Any) -> dict[str, str]:
    """``["batch_size=8"]`` -> ``{"batch_size": "8"}`` (a mapping passes through, from a file)."""
    if isinstance(pairs, Mapping):
        return dict(pairs)
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = str(pair).partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{pair!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def _flag_of(info: FieldInfo) -> Flag:
    return next((m for m in info.metadata if isinstance(m, Flag)), Flag())


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _config_class(annotation: Any) -> type[BaseModel] | None:
    inner = _without_none(annotation)
    return inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None


def _cli_annotation(annotation: Any) -> Any:
    """The type typer parses for a field's type (a Literal reads as str; pydantic checks it)."""
    inner = _without_none(annotation)
    origin = get_origin(inner)
    if origin is Literal:
        return str
    if origin in (list, tuple, set, frozenset, Sequence):
        args = [a for a in get_args(inner) if a is not Ellipsis]
        item = _cli_annotation(args[0]) if args else str
        return list[item]  # type: ignore[valid-type]
    if isinstance(inner, type) and issubclass(inner, bool | int | float | str | Path | enum.Enum):
        return inner
    return str


def _default_text(info: FieldInfo, flag: Flag) -> str:
    if flag.default_help is not None:
        return f" (default {flag.default_help})"
    default = info.default
    if default is PydanticUndefined or default is None or info.default_factory is not None or default == {}:
        return ""
    if isinstance(default, enum.Enum):
        default = default.value
    if isinstance(default, bool):
        return ""  # --x/--no-x already says it
    return f" (default {default})"


def option_fields(
    config: type[BaseModel], *, exclude: Sequence[str] = (), flags: Flags = None
) -> list[OptionField]:
    """Every setting of ``config``, nested configs walked, in declaration order.

    ``exclude`` names fields (by name or dotted path) the command declares itself.
    Two settings with one flag are a programming error, raised here.
    """
    out: list[OptionField] = []
    _walk(config, (), frozenset(exclude), out, flags or {})
    seen: dict[str, Path_] = {}
    for option in out:
        if option.flag in seen:
            raise TypeError(
                f"{config.__name__}: {option.flag} is declared by both {'.'.join(seen[option.flag])} "
                f"and {'.'.join(option.path)}; give one a Flag(name=...) or Flag(cli=False)"
            )
        seen[option.flag] = option.path
    return out


def _walk(
    config: type[BaseModel], prefix: Path_, exclude: frozenset[str], out: list[OptionField], flags: Flags
) -> None:
    for name, info in config.model_fields.items():
        path = (*prefix, name)
        if name in exclude or ".".join(path) in exclude:
            continue
        nested = _config_class(info.annotation)
        if nested is not None:
            _walk(nested, path, exclude, out, flags)
            continue
        flag = (flags or {}).get(".".join(path)) or _flag_of(info)
        text = (flag.help or info.description or "").strip()
        out.append(
            OptionField(
                path=path,
                flag=flag.name or f"--{name.replace('_', '-')}",
                help=f"{text}{_default_text(info, flag)}".strip(),
                annotation=flag.cli_type if flag.cli_type is not None else _cli_annotation(info.annotation),
                metavar=flag.metavar,
                parse=flag.parse,
                cli=flag.cli,
            )
        )


@dataclass(frozen=True)
class Given:
    """What the user typed for a command's generated options: path -> parsed value, nothing else."""

    config: type[BaseModel]
    values: Mapping[Path_, Any] = field(default_factory=dict)

    def nested(self) -> dict[str, Any]:
        """The given values as the nested dict the config validates."""
        out: dict[str, Any] = {}
        for path, value in self.values.items():
            _put(out, path, value)
        return out

    def get(self, dotted: str, default: Any = None) -> Any:
        return self.values.get(tuple(dotted.split(".")), default)

    def __contains__(self, dotted: object) -> bool:
        return isinstance(dotted, str) and tuple(dotted.split(".")) in self.values


def _put(out: dict[str, Any], path: Path_, value: Any) -> None:
    node = out
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value


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
    config: type[BaseModel], *, exclude: Sequence[str] = (), given: str = "given", flags: Flags = None
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

    return typer.Option(option.flag, help=option.help or None, metavar=option.metavar, show_default=False)


def from_file(
    config: type[BaseModel],
    data: Mapping[str, Any],
    *,
    source: str | Path,
    exclude: Sequence[str] = (),
    extra: Sequence[str] = (),
) -> dict[str, Any]:
    """A config file's flat keys (``timeout = 30``) as the nested dict ``config`` validates.

    Unknown keys are one :class:`ConfigError` naming the file, the key and the
    closest known key. ``extra`` are keys the caller reads itself (``models``);
    they are passed through unchanged.
    """
    by_key = {o.key: o for o in option_fields(config, exclude=exclude)}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in extra:
            out[key] = value
            continue
        option = by_key.get(key)
        if option is None:
            hint = phrase(did_you_mean(key, [*by_key, *extra], n=1))
            raise ConfigError(f"{source}: unknown key {key!r}{hint}")
        if option.parse is not None and value is not None:
            try:
                value = option.parse(value)
            except ConfigError as exc:
                raise ConfigError(f"{source}: key {key!r}: {exc}") from None
        _put(out, option.path, value)
    return out


def layered(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge nested dicts, the first layer winning (command line, then file, then defaults)."""
    out: dict[str, Any] = {}
    for layer in reversed(layers):
        _merge_into(out, layer)
    return out


def _merge_into(out: dict[str, Any], layer: Mapping[str, Any]) -> None:
    for key, value in layer.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            _merge_into(out[key], value)
        elif isinstance(value, Mapping):
            out[key] = {}
            _merge_into(out[key], value)
        else:
            out[key] = value


def build(config: type[ConfigT], values: Mapping[str, Any], *, source: str | Path | None = None) -> ConfigT:
    """Validate ``values`` as ``config``; a bad value is one ConfigError naming its flag (and file)."""
    try:
        return config.model_validate(values)
    except ValidationError as exc:
        raise _named(exc, config, source) from None


def _named(exc: ValidationError, config: type[BaseModel], source: str | Path | None) -> ConfigError:
    first = exc.errors()[0]
    loc = tuple(str(part) for part in first.get("loc", ()))
    flags = {o.path: o for o in option_fields(config)}
    option = next((flags[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in flags), None)
    message = str(first.get("msg") or exc).removeprefix("Value error, ")
    if option is None:
        where = ".".join(loc)
        return ConfigError(f"{source}: field {where!r}: {message}" if source else f"{where}: {message}")
    if source is not None:
        return ConfigError(f"{source}: key {option.key!r}: {message}")
    return ConfigError(f"invalid value for {option.flag}: {message}")


def iter_settings(config: BaseModel) -> Iterator[tuple[OptionField, Any]]:
    """Each setting of a built config with its value: what a run header or a report prints."""
    for option in option_fields(type(config)):
        value: Any = config
        for part in option.path:
            value = getattr(value, part, None)
        yield option, value
