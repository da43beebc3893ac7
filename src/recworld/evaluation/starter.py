"""``recworld init``: a commented ``eval.toml`` starter, generated from :class:`EvalConfig`.

Invariant: the starter names every key ``recworld eval --config`` accepts (every
file option of :class:`EvalConfig`, in declaration order, each with its help text
and default), and nothing else; it is valid TOML that :func:`read_eval_file`
accepts as written (one ``[[models]]`` entry, a baseline, so it runs), and
uncommenting any key's line gives that key its default. Generated from the same
declarations the options and the file reader use, so it cannot drift from them.
"""

from __future__ import annotations

import json
import textwrap
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel, Field

from recworld.console.options import Flag, Force, Given, with_options
from recworld.console.options.declare import option_fields
from recworld.evaluation.config import EvalConfig
from recworld.records import Settings

__all__ = ["NO_DEFAULT", "init_command", "starter_toml"]

NO_DEFAULT = "(no default)"
_HEADER = """\
# recworld eval configuration: run it with
#     recworld eval SUITE --config {name}
# Every key below is a `recworld eval` option (its flag without dashes, `_` for `-`). A flag given
# on the command line wins over this file; a [[models]] entry wins over the top level and may set
# any key the top level may. Uncomment a line to set it; each shows its default.
"""
_MODELS = """\

# One run per [[models]] entry. `spec` is what --model takes (`recworld models` lists them).
[[models]]
spec = "popularity"

# [[models]]
# spec = "openai:gpt-4o-mini"
# max_tokens = 16

# [[models]]
# spec = "llamacpp:qwen2.5-coder-0.5b"
# n_threads = 1
"""


def starter_toml(name: str = "eval.toml", config: type[EvalConfig] = EvalConfig) -> str:
    """The commented starter file (see the module docstring)."""
    lines = [_HEADER.format(name=name)]
    for option in option_fields(config):
        if not option.file:
            continue
        help_text = option.help.strip() or option.key
        lines += [f"# {part}" for part in textwrap.wrap(help_text, 96)]
        value = toml_value(default_at(config, option.path))
        lines.append(f"# {option.key} = {value}" if value is not None else f"# {option.key} =  {NO_DEFAULT}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n" + _MODELS


def default_at(config: type[BaseModel], path: tuple[str, ...]) -> Any:
    """The default of the setting at ``path``, nested configs walked (a factory is called)."""
    head, *rest = path
    info = config.model_fields[head]
    if rest:
        nested = info.annotation
        if not (isinstance(nested, type) and issubclass(nested, BaseModel)):
            raise TypeError(f"{config.__name__}.{head} is not a nested config")
        return default_at(nested, tuple(rest))
    return info.get_default(call_default_factory=True)


def toml_value(value: Any) -> str | None:
    """``value`` as a TOML literal; None for a value TOML cannot hold (None itself)."""
    if value is None:
        return None
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str | Path):
        return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list | tuple):
        items = [toml_value(v) for v in value]
        return None if any(i is None for i in items) else "[" + ", ".join(i for i in items if i) + "]"
    if isinstance(value, dict):
        pairs = [(k, toml_value(v)) for k, v in value.items()]
        if any(v is None for _, v in pairs):
            return None
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {v}" for k, v in pairs) + " }" if pairs else "{}"
    return None


class InitOptions(Settings):
    """``recworld init``'s settings: where the starter goes."""

    out: Annotated[
        Path, Field(description="The file to write ('-': print it on stdout)."), Flag("--out", metavar="FILE")
    ] = Path("eval.toml")
    force: Force = False


@with_options(InitOptions)
def init_command(*, given: Given) -> None:
    """Write a commented eval.toml starter: every `recworld eval` option with its default."""
    from recworld.errors import ConfigError
    from recworld.io import atomic_write_text

    job: InitOptions = given.build()
    out = job.out
    if str(out) == "-":
        typer.echo(starter_toml(), nl=False)
        return
    if out.exists() and not job.force:
        raise ConfigError(f"{out}: exists; give another --out, or --force to replace it")
    atomic_write_text(out, starter_toml(out.name))
    typer.echo(f"wrote {out}; edit it, then: recworld eval SUITE --config {out}")
