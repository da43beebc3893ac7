"""The declarations: :class:`Flag`, :class:`Nested`, :class:`Operational`, and the settings they describe."""

from __future__ import annotations

import enum
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from recworld.errors import ConfigError
from recworld.records import Settings

ConfigT = TypeVar("ConfigT", bound=BaseModel)
Path_ = tuple[str, ...]  # a field's place in the nested config: ("runner", "timeout_s")
Flags = Mapping[str, "Flag"] | None  # a Flag per dotted path, over the fields' own


@dataclass(frozen=True)
class Flag:
    """How one config field shows on the command line; only what differs from the defaults.

    * ``name``: the flag (default ``--field-name``); also the file key, with ``_``.
    * ``key``: the file (and library keyword) name, when it should not be the flag's
      (``--model-option`` is repeated on the command line, ``model_options`` is one table).
    * ``help``: default the field's ``description``; "(default X)" is appended.
    * ``metavar``: what the help shows for the value.
    * ``cli``: False keeps the field off the command line (file and library only).
    * ``file``: False keeps the field out of config files and library keywords
      (a command argument such as the suite, or what the command records itself).
    * ``parse`` and ``cli_type``: a field whose command-line form differs from its
      type, e.g. a comma-separated list (:func:`comma_list`) or ``KEY=VALUE`` pairs
      (:func:`key_values`). ``parse`` turns the raw typer value into the field's.
    * ``default_help``: what the help says the default is, when the field's own
      default is not what a user sees (``None`` meaning "the variant's").
    * ``aliases``: more names of the same option (``-o`` beside ``--out``).
    """

    name: str | None = None
    key: str | None = None
    help: str | None = None
    metavar: str | None = None
    cli: bool = True
    file: bool = True
    parse: Callable[[Any], Any] | None = None
    cli_type: Any = None
    default_help: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class NoFlag:
    """On a field that deliberately has no command-line flag: ``reason`` says why.

    The field stays a file key and a library keyword. On a nested config field it
    keeps the whole nested config off the command line (``BuildConfig.neumf``: NeuMF's
    training knobs are the library's). ``tests/cli/test_options_cover.py`` checks that
    every field of every command's config is a flag or carries this (or is omitted by
    :class:`Nested`, or named in the command's ``exclude``).
    """

    reason: str


@dataclass(frozen=True)
class Nested:
    """On a nested config field: settings of the inner config that this one sets itself.

    ``omit`` names them (``("seed",)``): they get no flag and no file key here, so
    ``EvalConfig.seed`` is the one ``--seed`` although the runner has a seed too.
    """

    omit: tuple[str, ...] = ()


@dataclass(frozen=True)
class Operational:
    """A setting that never changes what is asked or answered: how fast, how often, where to.

    Concurrency, timeouts, retries, output paths and which subset to run are
    operational; a run's identity (:func:`identity_settings`) is every other
    setting. On a nested config field it marks every setting inside.
    """


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
    file: bool = True
    identity: bool = True  # False: marked Operational (here or on a config above it)
    file_key: str | None = None
    # A switch's "off" flag when it is not --no-<flag> (Flag("--use-anchors/--no-anchors")).
    negative: str | None = None
    required: bool = False  # the field has no default: a command that reads no file requires the flag
    aliases: tuple[str, ...] = ()

    @property
    def param(self) -> str:
        """The Python parameter name of the generated option: the path joined by ``__``."""
        return "__".join(self.path)

    @property
    def key(self) -> str:
        """The key of this setting in a flat config file: the flag without dashes, ``_`` for ``-``."""
        return self.file_key or self.flag.lstrip("-").replace("-", "_")


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


def _marked(info: FieldInfo, kind: type) -> Any:
    return next((m for m in info.metadata if isinstance(m, kind)), None)


def _without_none(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def config_class(annotation: Any) -> type[BaseModel] | None:
    """The nested config class a field's annotation holds (``X | None`` unwrapped), else None."""
    inner = _without_none(annotation)
    return inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None


def leaf_paths(config: type[BaseModel], prefix: Path_ = ()) -> list[Path_]:
    """Every setting's path in ``config``, nested configs walked (flagged or not)."""
    out: list[Path_] = []
    for name, info in config.model_fields.items():
        inner = config_class(info.annotation)
        out += leaf_paths(inner, (*prefix, name)) if inner is not None else [(*prefix, name)]
    return out


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
    """`` (default X)``: the field's own default (a nested config given any value is built from its class)."""
    if flag.default_help is not None:
        return f" (default {flag.default_help})"
    default = info.default if info.default_factory is None else PydanticUndefined
    if default is PydanticUndefined or default is None or default in ({}, (), []):
        return ""
    if isinstance(default, enum.Enum):
        default = default.value
    if isinstance(default, bool):
        return ""  # --x/--no-x already says it
    return f" (default {default})"


def _help(text: str, default: str) -> str:
    """``Seconds per attempt (default 120).``: the default inside the sentence, not after it."""
    if default and text.endswith("."):
        return f"{text[:-1]}{default}."
    return f"{text}{default}".strip()


def _choices(annotation: Any) -> str | None:
    """``local|ray`` for a Literal field, so the help shows what it takes."""
    inner = _without_none(annotation)
    if get_origin(inner) is Literal:
        return "|".join(str(a) for a in get_args(inner))
    return None


def option_fields(
    config: type[BaseModel], *, exclude: Sequence[str] = (), flags: Flags = None
) -> list[OptionField]:
    """Every setting of ``config``, nested configs walked, in declaration order.

    ``exclude`` names fields (by name or dotted path) the command declares itself.
    ``flags`` gives a dotted path its own :class:`Flag`, over the field's own
    (LUNAR's ``--judge-base-url`` for ``judge.backend.base_url``).
    Two settings with one flag are a programming error, raised here.
    """
    out: list[OptionField] = []
    _walk(config, (), frozenset(exclude), out, identity=True, flags=flags or {}, required=True)
    for attribute, what in (("flag", "flag"), ("key", "file key")):
        seen: dict[str, Path_] = {}
        for option in out:
            name = getattr(option, attribute)
            if name in seen:
                raise TypeError(
                    f"{config.__name__}: {what} {name} is declared by both {'.'.join(seen[name])} "
                    f"and {'.'.join(option.path)}; give one a Flag(name=...) or omit it with Nested"
                )
            seen[name] = option.path
    return out


def _walk(
    config: type[BaseModel],
    prefix: Path_,
    exclude: frozenset[str],
    out: list[OptionField],
    *,
    identity: bool,
    flags: Mapping[str, Flag],
    required: bool,
) -> None:
    if not issubclass(config, Settings):  # every option a user gives is a bounded, finite number
        raise TypeError(
            f"{config.__qualname__} declares options, so it must derive from recworld.records.Settings"
        )
    for name, info in config.model_fields.items():
        path = (*prefix, name)
        if name in exclude or ".".join(path) in exclude:
            continue
        own_identity = identity and _marked(info, Operational) is None
        no_flag: NoFlag | None = _marked(info, NoFlag)
        nested = config_class(info.annotation)
        if nested is not None and no_flag is not None:
            continue  # the whole nested config is the library's (NoFlag says why)
        if nested is not None:
            marker: Nested | None = _marked(info, Nested)
            omitted = {".".join((*path, o)) for o in (marker.omit if marker else ())}
            inner_required = required and info.is_required()  # a defaulted config's fields never are
            _walk(
                nested,
                path,
                exclude | omitted,
                out,
                identity=own_identity,
                flags=flags,
                required=inner_required,
            )
            continue
        flag = flags.get(".".join(path)) or _flag_of(info)
        text = (flag.help or info.description or "").strip()
        positive, _, negative = (flag.name or f"--{name.replace('_', '-')}").partition("/")
        out.append(
            OptionField(
                path=path,
                flag=positive,
                negative=negative or None,
                help=_help(text, _default_text(info, flag)),
                annotation=flag.cli_type if flag.cli_type is not None else _cli_annotation(info.annotation),
                metavar=flag.metavar or _choices(info.annotation),
                parse=flag.parse,
                cli=flag.cli and no_flag is None,
                file=flag.file,
                identity=own_identity,
                file_key=flag.key,
                required=required and info.is_required(),
                aliases=flag.aliases,
            )
        )


def iter_settings(config: BaseModel) -> Iterator[tuple[OptionField, Any]]:
    """Each setting of a built config with its value: what a run header or a report prints."""
    for option in option_fields(type(config)):
        value: Any = config
        for part in option.path:
            value = getattr(value, part, None)
        yield option, value


def identity_settings(config: BaseModel) -> dict[str, Any]:
    """The settings that make a run what it is, by file key, as JSON values.

    Every setting counts unless it (or a config above it) is marked
    :class:`Operational`: a setting added without thinking about it splits runs
    rather than mixing them.
    """
    dumped = config.model_dump(mode="json")
    out: dict[str, Any] = {}
    for option in option_fields(type(config)):
        if not option.identity:
            continue
        value: Any = dumped
        for part in option.path:
            value = value.get(part) if isinstance(value, dict) else None
        out[option.key] = value
    return out


def put_at(out: dict[str, Any], path: Path_, value: Any) -> None:
    """Set ``value`` at ``path`` in the nested dict ``out``, making the levels on the way."""
    node = out
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = value
