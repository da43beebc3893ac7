"""RecBole atomic files (``NAME.inter``, ``NAME.item``, ``NAME.user``).

This is how ML-100K ships inside the ``recbole==1.2.1`` wheel. Each file is
tab-separated UTF-8 whose header names every column as ``name:type``, with
type one of ``token``, ``token_seq`` (space-separated tokens), ``float`` and
``float_seq``. ``.kg`` and ``.link`` hold Freebase triples keyed by Freebase
ids with no names, so they add nothing a question could show and are ignored.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from recworld.data._checks import require_known, require_unique
from recworld.data._tables import (
    Column,
    ColumnKind,
    TableSpec,
    first_line,
    read_table,
)
from recworld.data.dataset import MAX_TIMESTAMP, MIN_TIMESTAMP, Dataset, Domain
from recworld.errors import DataError

_KINDS = {
    "token": ColumnKind.TEXT,
    "token_seq": ColumnKind.TEXT,
    "float": ColumnKind.FLOAT,
    "float_seq": ColumnKind.TEXT,
}

# RecBole field names -> canonical names; fields not listed keep their RecBole name.
_ITEM_NAMES = {
    "movie_title": "title",
    "title": "title",
    "release_year": "year",
    "year": "year",
    "class": "genres",
    "genre": "genres",
    "genres": "genres",
    "brand": "brand",
    "categories": "categories",
}
_LIST_FIELDS = frozenset({"genres", "categories"})
# Bounds on numeric fields whose meaning is fixed: Unix seconds, and ratings (never negative).
_BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "timestamp": (MIN_TIMESTAMP, MAX_TIMESTAMP),
    "rating": (0.0, None),
}
_NO_GENRE = frozenset({"unknown"})


def find_inter(root: Path) -> Path | None:
    """The one ``.inter`` file of a folder (``<folder>.inter`` when there are several)."""
    candidates = sorted(p for p in root.glob("*.inter") if p.is_file())
    if len(candidates) == 1:
        return candidates[0]
    preferred = root / f"{root.name}.inter"
    return preferred if preferred in candidates else None


def _spec(path: Path, required: tuple[str, ...]) -> tuple[TableSpec, dict[str, str]]:
    """Build the table spec from the ``name:type`` header; returns it and a name -> header map."""
    header = first_line(path, "utf-8").split("\t")
    columns: list[Column] = []
    names: dict[str, str] = {}
    for field in header:
        base, sep, kind = field.partition(":")
        if not sep or kind not in _KINDS:
            raise DataError(
                f"header fields must be name:type with type in {sorted(_KINDS)}",
                path=path,
                line=1,
                field=field,
            )
        if base in names:
            raise DataError("the header names this column twice", path=path, line=1, field=base)
        names[base] = field
        if base in _BOUNDS and kind != "float":
            raise DataError(f"{base} must have the type float", path=path, line=1, field=field)
        low, high = _BOUNDS.get(base, (None, None))
        columns.append(Column(field, _KINDS[kind], required=base in required, low=low, high=high))
    for base in required:
        if base not in names:
            raise DataError(f"missing column; the header has {header}", path=path, line=1, field=base)
    return TableSpec(path, tuple(columns), sep="\t", encoding="utf-8", header=True), names


def _read(path: Path, required: tuple[str, ...]) -> tuple[pd.DataFrame, TableSpec]:
    spec, names = _spec(path, required)
    frame = read_table(spec)
    frame.columns = pd.Index(list(names))
    return frame, spec


def load_recbole(root: Path, name: str) -> Dataset:
    """Read ``<name>.inter`` plus the optional ``.item`` / ``.user`` beside it."""
    inter_path = find_inter(root)
    if inter_path is None:
        raise DataError("no single .inter file (name it after the folder when there are several)", path=root)
    inter, inter_spec = _read(inter_path, ("user_id", "item_id", "timestamp"))
    interactions = pd.DataFrame(
        {
            "user_id": inter["user_id"].to_numpy(dtype=object),
            "item_id": inter["item_id"].to_numpy(dtype=object),
            "timestamp": inter["timestamp"].to_numpy(dtype="float64").astype("int64"),
            "rating": inter["rating"].to_numpy(dtype="float64") if "rating" in inter else float("nan"),
        }
    )
    items = _items(inter_path.with_suffix(".item"))
    users = _users(inter_path.with_suffix(".user"))
    for frame, key, suffix in ((items, "item_id", ".item"), (users, "user_id", ".user")):
        if frame is not None:
            known = frame[key]
            require_known(inter, key, inter_spec, known, inter_path.with_suffix(suffix).name)
    return Dataset.from_frames(
        name,
        Domain.MOVIE,
        interactions,
        items,
        users,
        source={"format": "recbole", "ignored": ["kg", "link"]},
    )


def _items(path: Path) -> pd.DataFrame | None:
    if not path.exists():
        return None
    raw, spec = _read(path, ("item_id",))
    require_unique(raw, "item_id", spec)
    items = raw.rename(columns={k: v for k, v in _ITEM_NAMES.items() if k in raw.columns})
    if "year" in items:
        # ML-100K's one unknown movie has the year "unkonwn"; anything non-numeric is no year.
        items["year"] = pd.to_numeric(items["year"], errors="coerce").astype("Int64")
    for column in _LIST_FIELDS & set(items.columns):
        items[column] = [[t for t in str(v).split() if t not in _NO_GENRE] for v in items[column]]
    return items


def _users(path: Path) -> pd.DataFrame | None:
    if not path.exists():
        return None
    users, spec = _read(path, ("user_id",))
    require_unique(users, "user_id", spec)
    if "age" in users:
        users["age"] = pd.to_numeric(users["age"], errors="coerce").astype("Int64")
    return users
