"""Package faces whose public names load their module on first use (Scientific Python's SPEC 1).

Invariant: for a package that calls :func:`attach`, ``package.NAME`` for every ``NAME`` in its
table is the object ``NAME`` of the module the table names, imported the first time it is asked
for and then bound on the package (later lookups are plain attribute reads); any other missing
name is an ``AttributeError`` naming the package. ``dir(package)`` lists what is bound plus every
table name. A package keeps ``if TYPE_CHECKING:`` imports of the same names for type checkers.

    __getattr__, __dir__ = attach(__name__, {"Dataset": "recworld.data.dataset", ...})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def attach(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` for ``names`` (public name -> module)."""
    namespace = sys.modules[package].__dict__
    table = dict(names)

    def lookup(name: str) -> object:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def listing() -> list[str]:
        return sorted({*namespace, *table})

    return lookup, listing
