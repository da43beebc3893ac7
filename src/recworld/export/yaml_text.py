"""YAML written by a YAML emitter (PyYAML's ``SafeDumper``), never by string formatting.

A measure id once went into ``measure: {measure}`` unquoted, and a crafted one
carried ``!!python/object/apply:os.system`` into a file that lm-eval loads with
an unsafe loader. Here every value is a Python object handed to the emitter,
which quotes and escapes as YAML needs; the one tag it may write is lm-eval's
``!function module.name`` (:class:`FunctionRef`), and only for a dotted name.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["FunctionRef", "dump"]

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


class FunctionRef(str):
    """lm-eval's ``!function module.name``: a reference to a Python function beside the YAML."""

    __slots__ = ()

    def __new__(cls, name: str) -> FunctionRef:
        if not _DOTTED.fullmatch(name):
            raise ValueError(f"not a dotted function name: {name!r}")
        return super().__new__(cls, name)


class _Dumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML ships no type stubs
    """SafeDumper that also writes :class:`FunctionRef` and never emits aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _function(dumper: Any, value: FunctionRef) -> Any:
    return dumper.represent_scalar("!function", str(value))


_Dumper.add_representer(FunctionRef, _function)


def dump(data: dict[str, Any]) -> str:
    """``data`` as a YAML document: keys in the given order, ASCII only, long lines kept whole."""
    text = yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=False,
        default_flow_style=False,
        width=1 << 16,
    )
    return str(text)
