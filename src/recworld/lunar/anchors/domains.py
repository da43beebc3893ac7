"""Which LUNAR domain a real source category becomes: one editable table.

The table (``domains.json`` in this package) maps a source category (an
Amazon Reviews 2018 category file name such as ``Grocery_and_Gourmet_Food``, or
a RecWorld dataset domain such as ``movie``) to a tier-1 domain and the
behaviour type its records stand for. ``*`` is the fallback. A user's own table
(same format, ``--domain-map FILE``) replaces the shipped one entry by entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from recworld.errors import DataError
from recworld.io import parse_json, read_json_object
from recworld.lunar.schemas import BehaviourType, Category

FALLBACK = "*"


@dataclass(frozen=True)
class DomainMap:
    """Source category → (tier-1 domain, behaviour type)."""

    entries: dict[str, tuple[Category, BehaviourType]]

    def lookup(self, category: str) -> tuple[Category, BehaviourType]:
        found = self.entries.get(category) or self.entries.get(FALLBACK)
        if found is None:
            raise DataError(
                f"source category {category!r} has no entry in the domain map and no '*' fallback"
            )
        return found


def _entries(raw: dict[str, object], path: Path | None) -> dict[str, tuple[Category, BehaviourType]]:
    out: dict[str, tuple[Category, BehaviourType]] = {}
    for key, value in raw.items():
        if key.startswith("_"):  # comments
            continue
        if not isinstance(value, dict) or set(value) != {"domain", "type"}:
            raise DataError("each entry must be {'domain': ..., 'type': ...}", path=path, field=key)
        try:
            out[key] = (Category(str(value["domain"])), BehaviourType(str(value["type"])))
        except ValueError as exc:
            raise DataError(f"unknown domain or type: {exc}", path=path, field=key) from None
    return out


def shipped_table() -> dict[str, tuple[Category, BehaviourType]]:
    text = (resources.files("recworld.lunar.anchors") / "domains.json").read_text(encoding="utf-8")
    raw = parse_json(text)
    assert isinstance(raw, dict)
    return _entries(raw, None)


def load_domain_map(path: Path | None = None) -> DomainMap:
    """The shipped table, with the entries of ``path`` (if given) on top."""
    entries = shipped_table()
    if path is not None:
        entries |= _entries(read_json_object(path), path)
    return DomainMap(entries)
