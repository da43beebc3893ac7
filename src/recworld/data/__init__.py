"""Datasets: the canonical form, one loader per published source format, and fetching.

Every name here loads its module (and pandas) on first use (module ``__getattr__``,
the lazy-attribute pattern of Scientific Python's SPEC 1), so a command module that
imports :mod:`recworld.data.options` does not pay for the loaders at start-up.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING

from recworld.lazy import attach

if TYPE_CHECKING:
    from recworld.data.dataset import ITEM_FIELDS, USER_FIELDS, Dataset, Domain, FieldKind
    from recworld.data.fetch import FETCHABLE, fetch, resolve_dataset
    from recworld.data.formats import FORMATS, SourceFormat, detect_format, get_format
    from recworld.data.metadata import apply_metadata
    from recworld.data.sources import load_source

# Public names that load their module (and its heavy imports) when first asked for.
_ON_FIRST_USE = {
    "ITEM_FIELDS": "recworld.data.dataset",
    "USER_FIELDS": "recworld.data.dataset",
    "Dataset": "recworld.data.dataset",
    "Domain": "recworld.data.dataset",
    "FieldKind": "recworld.data.dataset",
    "FETCHABLE": "recworld.data.fetch",
    "fetch": "recworld.data.fetch",
    "resolve_dataset": "recworld.data.fetch",
    "FORMATS": "recworld.data.formats",
    "SourceFormat": "recworld.data.formats",
    "detect_format": "recworld.data.formats",
    "get_format": "recworld.data.formats",
    "apply_metadata": "recworld.data.metadata",
    "load_source": "recworld.data.sources",
}


__getattr__, __dir__ = attach(__name__, _ON_FIRST_USE)


class _Face(types.ModuleType):
    """This package's module object: importing ``recworld.data.fetch`` leaves ``fetch`` the function.

    The import system binds a loaded submodule on its package (``setattr``); with the names
    loaded on first use, that binding would replace the function ``fetch`` with its module.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and _ON_FIRST_USE.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Face


__all__ = [
    "FETCHABLE",
    "FORMATS",
    "ITEM_FIELDS",
    "USER_FIELDS",
    "Dataset",
    "Domain",
    "FieldKind",
    "SourceFormat",
    "apply_metadata",
    "detect_format",
    "fetch",
    "get_format",
    "load_source",
    "resolve_dataset",
]
