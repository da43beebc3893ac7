"""Config files and keywords: flat keys in, the nested shape out; layering; validation that names the key."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from recworld.console.options.declare import ConfigT, option_fields, put_at
from recworld.console.suggest import did_you_mean, phrase
from recworld.errors import ConfigError


def from_file(
    config: type[BaseModel],
    data: Mapping[str, Any],
    *,
    source: str | Path,
    exclude: Sequence[str] = (),
    extra: Sequence[str] = (),
    noun: str = "key",
) -> dict[str, Any]:
    """A config file's flat keys (``timeout = 30``) as the nested dict ``config`` validates.

    Unknown keys are one :class:`ConfigError` naming the file, the key and the
    closest known key. ``extra`` are keys the caller reads itself (``models``);
    they are passed through unchanged. Library calls that take settings as
    keywords use this too, with ``noun="keyword"``.
    """
    by_key = {o.key: o for o in option_fields(config, exclude=exclude) if o.file}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in extra:
            out[key] = value
            continue
        option = by_key.get(key)
        if option is None:
            hint = phrase(did_you_mean(key, [*by_key, *extra], n=1))
            raise ConfigError(f"{source}: unknown {noun} {key!r}{hint}")
        if option.parse is not None and value is not None:
            try:
                value = option.parse(value)
            except ConfigError as exc:
                raise ConfigError(f"{source}: {noun} {key!r}: {exc}") from None
        put_at(out, option.path, value)
    return out


def file_keys(config: type[BaseModel], *, exclude: Sequence[str] = ()) -> list[str]:
    """The keys a config file (or a library call's keywords) may set, in declaration order."""
    return [o.key for o in option_fields(config, exclude=exclude) if o.file]


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


def build(
    config: type[ConfigT], values: Mapping[str, Any], *, source: str | Path | None = None, noun: str = "key"
) -> ConfigT:
    """Validate ``values`` as ``config``; a bad value is one ConfigError naming its flag (and file).

    With ``source`` the error names the file key (``noun``: "key", or "keyword"
    for a library call) instead of the flag.
    """
    try:
        return config.model_validate(values)
    except ValidationError as exc:
        raise _named(exc, config, source, noun) from None


def _named(
    exc: ValidationError, config: type[BaseModel], source: str | Path | None, noun: str = "key"
) -> ConfigError:
    first = exc.errors()[0]
    loc = tuple(str(part) for part in first.get("loc", ()))
    flags = {o.path: o for o in option_fields(config)}
    option = next((flags[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in flags), None)
    message = str(first.get("msg") or exc).removeprefix("Value error, ")
    if option is None:
        where = ".".join(loc)
        return ConfigError(f"{source}: field {where!r}: {message}" if source else f"{where}: {message}")
    if source is not None:
        return ConfigError(f"{source}: {noun} {option.key!r}: {message}")
    return ConfigError(f"invalid value for {option.flag}: {message}")
