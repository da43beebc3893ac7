"""The canonical dataset every loader produces and every miner reads.

Three pandas tables with fixed column names and dtypes:

``interactions``
    ``user_id`` (str), ``item_id`` (str), ``timestamp`` (int64, Unix seconds),
    ``rating`` (float64, NaN where the source has none). Sorted by
    (user_id, timestamp) so every user's history is in time order; rows with
    the same user and timestamp keep the order the source file gave them
    (Netflix dates are days, ML-25M has same-second ratings: breaking such ties
    by item id would make the "next item" partly alphabetical).
``items``
    ``item_id`` (str, unique), ``title`` (str), then any of the typed
    attributes in :data:`ITEM_FIELDS` that the source has.
``users``
    ``user_id`` (str, unique), then any demographics in :data:`USER_FIELDS`.

A dataset is cached as three Parquet files plus ``dataset.json``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recworld.capped import open_regular
from recworld.domain import Domain
from recworld.errors import DataError
from recworld.io import atomic_directory, atomic_write_json, read_json_object, writing

# Domain is defined in the foundation (recworld.domain) and named here, where every loader finds it.
__all__ = [
    "INTERACTION_COLUMNS",
    "ITEM_FIELDS",
    "MAX_TIMESTAMP",
    "MIN_TIMESTAMP",
    "SCHEMA_VERSION",
    "USER_FIELDS",
    "Dataset",
    "Domain",
    "FieldKind",
]

SCHEMA_VERSION = "recworld.dataset/1"
# The Unix seconds a timestamp may hold: 1900-01-01 to 9999-12-31 UTC. Anything outside is
# a unit mistake (milliseconds) or garbage such as 1e30, which int64 would wrap silently.
MIN_TIMESTAMP = -2_208_988_800
MAX_TIMESTAMP = 253_402_300_799


class FieldKind(StrEnum):
    TEXT = "text"  # one string
    INT = "int"  # nullable integer
    LIST = "list"  # list of strings (genres, cast, category path root -> leaf)


# Typed item attributes a source may provide. Measures declare which they need.
ITEM_FIELDS: dict[str, FieldKind] = {
    "title": FieldKind.TEXT,
    "year": FieldKind.INT,
    "genres": FieldKind.LIST,
    "brand": FieldKind.TEXT,
    "color": FieldKind.TEXT,
    "categories": FieldKind.LIST,  # taxonomy path, root first
    "cast": FieldKind.LIST,
    "director": FieldKind.LIST,
    "logline": FieldKind.TEXT,
    "image": FieldKind.TEXT,  # path or URL of a poster / product image
    "image_description": FieldKind.TEXT,  # text produced by a vision model
}

USER_FIELDS: dict[str, FieldKind] = {
    "age": FieldKind.INT,
    "gender": FieldKind.TEXT,
    "occupation": FieldKind.TEXT,
    "zip_code": FieldKind.TEXT,
}

INTERACTION_COLUMNS = ("user_id", "item_id", "timestamp", "rating")


def _normalise_text(series: pd.Series) -> pd.Series:
    return series.astype("string").astype(object).where(series.notna(), None)


def _normalise_list(series: pd.Series) -> pd.Series:
    def fix(value: Any) -> list[str]:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return []
        if isinstance(value, str):
            return [value] if value else []
        return [str(v) for v in value if v is not None and str(v) != ""]

    return series.map(fix).astype(object)


def _normalise_column(series: pd.Series, kind: FieldKind) -> pd.Series:
    if kind is FieldKind.TEXT:
        return _normalise_text(series)
    if kind is FieldKind.INT:
        return pd.to_numeric(series, errors="coerce").astype("Int64")
    return _normalise_list(series)


@dataclass(frozen=True)
class Dataset:
    """A loaded, validated dataset in canonical form."""

    name: str
    domain: Domain
    interactions: pd.DataFrame
    items: pd.DataFrame
    users: pd.DataFrame
    source: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_frames(
        cls,
        name: str,
        domain: Domain | str,
        interactions: pd.DataFrame,
        items: pd.DataFrame | None = None,
        users: pd.DataFrame | None = None,
        source: dict[str, Any] | None = None,
    ) -> Dataset:
        """Normalise dtypes, order rows, fill missing items/users, and validate."""
        inter = interactions.copy()
        for column in ("user_id", "item_id", "timestamp"):
            if column not in inter.columns:
                raise DataError(f"interactions lack the column {column!r}", field=column)
        if "rating" not in inter.columns:
            inter["rating"] = np.nan
        inter = inter.loc[:, list(INTERACTION_COLUMNS)]
        inter["user_id"] = inter["user_id"].astype(str)
        inter["item_id"] = inter["item_id"].astype(str)
        inter["timestamp"] = _timestamps(inter["timestamp"])
        inter["rating"] = pd.to_numeric(inter["rating"]).astype("float64")
        if np.isinf(inter["rating"].to_numpy()).any():
            raise DataError("a rating is infinite", field="rating")
        inter = _sorted_interactions(inter)

        item_frame = _canonical_entities(items, "item_id", ITEM_FIELDS, inter["item_id"])
        if "title" not in item_frame.columns:
            item_frame["title"] = item_frame["item_id"]
        item_frame["title"] = item_frame["title"].where(item_frame["title"].notna(), item_frame["item_id"])
        user_frame = _canonical_entities(users, "user_id", USER_FIELDS, inter["user_id"])
        dataset = cls(
            name=name,
            domain=Domain(domain),
            interactions=inter,
            items=item_frame,
            users=user_frame,
            source=dict(source or {}),
        )
        dataset.validate()
        return dataset

    # -- validation -------------------------------------------------------------------------

    def validate(self) -> None:
        """Raise :class:`DataError` if the tables break the canonical contract."""
        if self.interactions.empty:
            raise DataError(f"dataset {self.name!r} has no interactions")
        if self.items["item_id"].duplicated().any():
            dup = self.items.loc[self.items["item_id"].duplicated(), "item_id"].iloc[0]
            raise DataError(f"duplicate item id {dup!r}", field="item_id")
        if self.users["user_id"].duplicated().any():
            dup = self.users.loc[self.users["user_id"].duplicated(), "user_id"].iloc[0]
            raise DataError(f"duplicate user id {dup!r}", field="user_id")
        unknown = ~self.interactions["item_id"].isin(self.items["item_id"])
        if unknown.any():
            bad = self.interactions.loc[unknown, "item_id"].iloc[0]
            raise DataError(f"interaction refers to unknown item {bad!r}", field="item_id")

    # -- conveniences ------------------------------------------------------------------------

    def has_item_field(self, name: str) -> bool:
        """True when at least one item has a non-empty value for ``name``."""
        if name not in self.items.columns:
            return False
        column = self.items[name]
        if ITEM_FIELDS.get(name) is FieldKind.LIST:
            return bool(column.map(len).gt(0).any())
        return bool(column.notna().any())

    @property
    def item_fields(self) -> list[str]:
        return [name for name in ITEM_FIELDS if self.has_item_field(name)]

    def fingerprint(self) -> str:
        """A SHA-256 over the canonical content (not over file names or load order)."""
        digest = hashlib.sha256()
        digest.update(self.domain.value.encode())
        for frame in (self.interactions, self.items, self.users):
            hashed = pd.util.hash_pandas_object(
                frame.astype({c: str for c in frame.columns if frame[c].dtype == object}),
                index=False,
            )
            digest.update(hashed.to_numpy().tobytes())
            digest.update(",".join(frame.columns).encode())
        return digest.hexdigest()

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "domain": self.domain.value,
            "users": int(self.interactions["user_id"].nunique()),
            "items": int(self.interactions["item_id"].nunique()),
            "interactions": len(self.interactions),
            "item_fields": self.item_fields,
        }

    # -- Parquet cache -----------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write the dataset as Parquet atomically; returns the directory."""
        with atomic_directory(directory) as tmp:
            for name, frame in (
                ("interactions", self.interactions),
                ("items", self.items),
                ("users", self.users),
            ):
                with writing(tmp / f"{name}.parquet"):  # a full disk or ulimit -f: one line
                    frame.to_parquet(tmp / f"{name}.parquet", index=False)
            atomic_write_json(
                tmp / "dataset.json",
                {
                    "schema": SCHEMA_VERSION,
                    "name": self.name,
                    "domain": self.domain.value,
                    "source": self.source,
                    "fingerprint": self.fingerprint(),
                    "summary": self.summary(),
                },
            )
        return Path(directory)

    @classmethod
    def load(cls, directory: str | Path) -> Dataset:
        """Read a dataset written by :meth:`save`; a damaged cache is one DataError naming the file."""
        root = Path(directory)
        meta_path = root / "dataset.json"
        meta = read_json_object(meta_path, missing="not a RecWorld dataset cache (no dataset.json)")
        if meta.get("schema") != SCHEMA_VERSION:
            raise DataError(f"unsupported schema {meta.get('schema')!r}", path=meta_path)
        try:
            name, domain = str(meta["name"]), Domain(meta["domain"])
        except (KeyError, ValueError) as exc:
            raise DataError(f"bad or missing name/domain ({exc})", path=meta_path) from None
        source = meta.get("source", {})
        return cls(
            name=name,
            domain=domain,
            interactions=_read_parquet(root / "interactions.parquet", INTERACTION_COLUMNS),
            items=_read_entities(root / "items.parquet", "item_id", ITEM_FIELDS),
            users=_read_entities(root / "users.parquet", "user_id", USER_FIELDS),
            source=source if isinstance(source, dict) else {},
        )


def _read_parquet(path: Path, required: tuple[str, ...]) -> pd.DataFrame:
    """One cache table; a truncated or foreign file names itself instead of raising from pyarrow."""
    import pyarrow as pa

    try:
        with open_regular(path, missing="dataset cache file is missing") as handle:
            frame = pd.read_parquet(handle)
    except (OSError, ValueError, TypeError, pa.ArrowException) as exc:
        raise DataError(f"corrupt or truncated dataset cache file ({exc})", path=path) from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise DataError("dataset cache file lacks a column", path=path, field=missing[0])
    return frame


def _read_entities(path: Path, key: str, kinds: dict[str, FieldKind]) -> pd.DataFrame:
    frame = _read_parquet(path, (key,))
    for column, kind in kinds.items():
        if column in frame.columns:
            frame[column] = _normalise_column(frame[column], kind)
    frame[key] = frame[key].astype(str)
    # Source-specific text columns (imdb_id, age_group, ...) come back like TEXT fields:
    # object dtype with None, as loaders build them, so a save/load round trip is lossless.
    for column in [c for c in frame.columns if c not in kinds and c != key]:
        if isinstance(frame[column].dtype, pd.StringDtype):
            frame[column] = _normalise_text(frame[column])
    return frame


def _timestamps(column: pd.Series) -> pd.Series:
    """int64 Unix seconds, refusing NaN, infinities and values outside the calendar."""
    try:
        values = pd.to_numeric(column)
    except (ValueError, TypeError) as exc:
        raise DataError(f"a timestamp is not a number ({exc})", field="timestamp") from None
    as_float = values.to_numpy(dtype="float64")
    bad = ~(np.isfinite(as_float) & (as_float >= MIN_TIMESTAMP) & (as_float <= MAX_TIMESTAMP))
    if bad.any():
        raise DataError(
            f"timestamp {values.iloc[int(bad.argmax())]!r} is not Unix seconds between years 1900 and 9999",
            field="timestamp",
        )
    return values.astype("int64")


def _string_ranks(column: pd.Series) -> np.ndarray | None:
    """Each value's rank among the column's distinct values in string order; None if a value is missing."""
    codes, uniques = pd.factorize(column)
    if len(codes) and codes.min() < 0:
        return None
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[np.asarray(uniques.argsort())] = np.arange(len(uniques), dtype=np.int64)
    return rank[codes]


def _sorted_interactions(inter: pd.DataFrame) -> pd.DataFrame:
    """Rows ordered by (user_id, timestamp), stable: equal keys keep their input (file) order.

    Same order as ``sort_values(["user_id", "timestamp"], kind="stable")``, which
    sorts by the columns' category codes too, but it builds them by sorting every
    string (7 s per 5M rows); factorising first sorts only the distinct ids.
    """
    if len(inter) == 0:
        return inter.reset_index(drop=True)
    users = _string_ranks(inter["user_id"])
    if users is None:  # missing ids: keep pandas' NaN placement
        ordered = inter.sort_values(["user_id", "timestamp"], kind="stable")
        return ordered.reset_index(drop=True)
    times = inter["timestamp"].to_numpy()
    n_users = int(users.max()) + 1
    times = times - times.min()
    span = int(times.max()) + 1
    if n_users * span >= 2**63:
        # Rank the timestamps (one extra sort) so the key fits in 64 bits.
        distinct, times = np.unique(times, return_inverse=True)
        span = len(distinct)
    if n_users * span < 2**63:
        # One int64 key (user, time) and one stable sort: pandas' multi-key lexsort is far slower.
        key = users.astype(np.int64) * np.int64(span) + times.astype(np.int64)
        order = np.argsort(key, kind="stable")
    else:
        order = np.lexsort((times, users))
    return inter.take(order).reset_index(drop=True)


def _canonical_entities(
    frame: pd.DataFrame | None,
    key: str,
    kinds: dict[str, FieldKind],
    referenced: pd.Series,
) -> pd.DataFrame:
    """Normalise an entity table and add bare rows for ids that only interactions mention."""
    if frame is None:
        frame = pd.DataFrame({key: pd.Series(dtype=str)})
    if key not in frame.columns:
        raise DataError(f"table lacks the key column {key!r}", field=key)
    out = frame.copy()
    out[key] = out[key].astype(str)
    known = set(out[key])
    missing = sorted(set(referenced.unique()) - known)
    if missing:
        out = pd.concat([out, pd.DataFrame({key: missing})], ignore_index=True)
    for column, kind in kinds.items():
        if column in out.columns:
            out[column] = _normalise_column(out[column], kind)
    ordered = [key] + [c for c in kinds if c in out.columns]
    extra = [c for c in out.columns if c not in ordered]
    for column in extra:  # as _read_entities gives them back, so a save/load round trip is lossless
        if isinstance(out[column].dtype, pd.StringDtype) or pd.api.types.is_string_dtype(out[column]):
            out[column] = _normalise_text(out[column])
    return out.loc[:, ordered + extra].sort_values(key, kind="stable").reset_index(drop=True)
