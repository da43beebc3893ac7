"""Real anchors: demographic records and timestamped real behaviour.

Two sources feed the same :class:`AnchorUser`:

* a RecWorld :class:`~recworld.data.Dataset` (MovieLens users have real age,
  gender, occupation and zip code, and their timestamped ratings stand for
  watching events);
* the user's own logs in a documented CSV or JSONL layout (``docs/lunar.md``),
  in any of the 13 domains.

Anchors guide synthesis and are never written to the synthetic dataset.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recworld.data import Dataset
from recworld.errors import DataError
from recworld.lunar.schemas import (
    BehaviourRecord,
    BehaviourType,
    Category,
    Demographic,
    FieldValue,
    Provenance,
)
from recworld.seeding import rng

WEEK_S = 7 * 24 * 3600
DAY_S = 24 * 3600

_DOMAIN_OF_DATASET = {
    "movie": (Category.MOVIES, BehaviourType.WATCH),
    "music": (Category.MUSIC, BehaviourType.LISTEN),
}
_DEFAULT = (Category.SHOPPING, BehaviourType.PURCHASE)


@dataclass(frozen=True)
class AnchorUser:
    """One real user: demographics and chronologically ordered real records."""

    demographic: Demographic
    records: tuple[BehaviourRecord, ...]

    @property
    def user_id(self) -> str:
        return self.demographic.user_id

    def start_ts(self) -> int:
        """Monday 00:00 UTC of the week of the first real record (week 0 of the trajectory)."""
        if not self.records:
            return 0
        first = min(r.timestamp for r in self.records)
        day_start = first - first % DAY_S
        weekday = datetime.fromtimestamp(day_start, UTC).weekday()
        return day_start - weekday * DAY_S

    def within(self, start: int, end: int) -> list[BehaviourRecord]:
        return [r for r in self.records if start <= r.timestamp < end]


def anchors_from_dataset(
    dataset: Dataset, n_users: int, *, seed: int = 0, min_events: int = 5
) -> list[AnchorUser]:
    """Draw ``n_users`` users (seeded) with at least ``min_events`` interactions."""
    inter = dataset.interactions
    counts = inter.groupby("user_id").size()
    eligible = sorted(str(u) for u in counts[counts >= min_events].index)
    if len(eligible) < n_users:
        raise DataError(
            f"dataset {dataset.name!r} has only {len(eligible)} users with >= {min_events} events"
        )
    picked = sorted(rng(seed, "lunar", "anchors").choice(eligible, size=n_users, replace=False).tolist())
    domain, btype = _DOMAIN_OF_DATASET.get(dataset.domain.value, _DEFAULT)
    items = dataset.items.set_index("item_id")
    users = dataset.users.set_index("user_id")
    out: list[AnchorUser] = []
    for user_id in picked:
        rows = inter[inter["user_id"] == user_id]
        records = []
        for n, row in enumerate(rows.itertuples(index=False)):
            item = items.loc[row.item_id]
            fields: dict[str, FieldValue] = {"title": str(item["title"])}
            if "genres" in items.columns and len(item["genres"]):
                fields["genres"] = ", ".join(item["genres"])
            if not np.isnan(row.rating):
                fields["rating"] = float(row.rating)
            records.append(
                BehaviourRecord(
                    record_id=f"anchor-{user_id}-{n:05d}",
                    user_id=user_id,
                    timestamp=int(row.timestamp),
                    domain=domain,
                    type=btype,
                    fields=fields,
                    provenance=Provenance.ANCHOR,
                )
            )
        out.append(AnchorUser(_demographic(user_id, users), tuple(records)))
    return out


def _demographic(user_id: str, users: pd.DataFrame) -> Demographic:
    if user_id not in users.index:
        return Demographic(user_id=user_id)
    row = users.loc[user_id]

    def get(name: str) -> str | None:
        if name not in row.index or pd.isna(row[name]):
            return None
        return str(row[name])

    age = get("age")
    zip_code = get("zip_code")
    return Demographic(
        user_id=user_id,
        age=None if age is None else int(age),
        gender=get("gender"),
        occupation=get("occupation"),
        location=None if zip_code is None else f"zip {zip_code}",
    )


# -- importer for user-supplied logs ------------------------------------------------------------

_EVENT_FILES = ("events.jsonl", "events.csv")
_USER_FILES = ("users.jsonl", "users.csv")
_DEMO_KEYS = ("age", "gender", "occupation", "location")


def load_anchor_files(path: Path, n_users: int | None = None, *, seed: int = 0) -> list[AnchorUser]:
    """Read ``events.{csv,jsonl}`` (+ optional ``users.{csv,jsonl}``) from a folder, or one events file."""
    events_path, users_path = _locate(path)
    demos = (
        {d.user_id: d for d in (_parse_user(row, users_path, n) for n, row in _rows(users_path))}
        if users_path
        else {}
    )
    by_user: dict[str, list[BehaviourRecord]] = {}
    for line, row in _rows(events_path):
        record = _parse_event(row, events_path, line, len(by_user.get(str(row.get("user_id", "")), [])))
        by_user.setdefault(record.user_id, []).append(record)
    if not by_user:
        raise DataError("no events", path=events_path)
    ids = sorted(by_user)
    if n_users is not None:
        if n_users > len(ids):
            raise DataError(f"asked for {n_users} users, the file has {len(ids)}", path=events_path)
        ids = sorted(rng(seed, "lunar", "anchors").choice(ids, size=n_users, replace=False).tolist())
    return [
        AnchorUser(demos.get(u, Demographic(user_id=u)), tuple(sorted(by_user[u], key=lambda r: r.timestamp)))
        for u in ids
    ]


def _locate(path: Path) -> tuple[Path, Path | None]:
    if path.is_file():
        return path, None
    if not path.is_dir():
        raise DataError("anchor source not found", path=path)
    events = next((path / n for n in _EVENT_FILES if (path / n).exists()), None)
    if events is None:
        raise DataError("folder has neither events.jsonl nor events.csv", path=path)
    users = next((path / n for n in _USER_FILES if (path / n).exists()), None)
    return events, users


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        if path.suffix == ".csv":
            for n, row in enumerate(csv.DictReader(handle), start=2):
                yield n, {k: v for k, v in row.items() if k is not None and v not in (None, "")}
            return
        for n, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON: {exc.msg}", path=path, line=n) from exc
            if not isinstance(obj, dict):
                raise DataError("each line must be a JSON object", path=path, line=n)
            yield n, obj


def _parse_time(value: Any, path: Path, line: int) -> int:
    if isinstance(value, int | float) or (isinstance(value, str) and value.strip().lstrip("-").isdigit()):
        return int(float(value))
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError as exc:
            raise DataError(
                f"timestamp {value!r} is neither Unix seconds nor ISO-8601",
                path=path,
                line=line,
                field="timestamp",
            ) from exc
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return int(parsed.timestamp())
    raise DataError("missing timestamp", path=path, line=line, field="timestamp")


def _parse_event(row: dict[str, Any], path: Path, line: int, n: int) -> BehaviourRecord:
    for key in ("user_id", "timestamp", "domain", "type"):
        if key not in row:
            raise DataError("missing column", path=path, line=line, field=key)
    try:
        domain = Category(str(row["domain"]).strip().lower())
    except ValueError as exc:
        known = ", ".join(c.value for c in Category)
        raise DataError(
            f"unknown domain {row['domain']!r}; known: {known}", path=path, line=line, field="domain"
        ) from exc
    try:
        btype = BehaviourType(str(row["type"]).strip().lower())
    except ValueError as exc:
        known = ", ".join(t.value for t in BehaviourType)
        raise DataError(
            f"unknown type {row['type']!r}; known: {known}", path=path, line=line, field="type"
        ) from exc
    fields: dict[str, FieldValue] = {}
    raw_fields = row.get("fields", {})
    if not isinstance(raw_fields, dict):
        raise DataError("'fields' must be an object", path=path, line=line, field="fields")
    for key, value in {**raw_fields, **{k[6:]: v for k, v in row.items() if k.startswith("field.")}}.items():
        if not isinstance(value, str | int | float | bool):
            raise DataError(
                "field values must be strings, numbers or booleans", path=path, line=line, field=key
            )
        fields[str(key)] = _number(value) if path.suffix == ".csv" and isinstance(value, str) else value
    user_id = str(row["user_id"])
    return BehaviourRecord(
        record_id=f"anchor-{user_id}-{n:05d}",
        user_id=user_id,
        timestamp=_parse_time(row["timestamp"], path, line),
        domain=domain,
        type=btype,
        fields=fields,
        provenance=Provenance.ANCHOR,
    )


def _number(text: str) -> FieldValue:
    """CSV cells are text; numeric ones become numbers so amounts can be summed."""
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() and "." not in text else value


def _parse_user(row: dict[str, Any], path: Path, line: int) -> Demographic:
    if "user_id" not in row:
        raise DataError("missing column", path=path, line=line, field="user_id")
    age = row.get("age")
    try:
        age_value = None if age is None else int(age)
    except ValueError as exc:
        raise DataError(f"age {age!r} is not an integer", path=path, line=line, field="age") from exc
    extra = {str(k): str(v) for k, v in row.items() if k not in (*_DEMO_KEYS, "user_id")}
    return Demographic(
        user_id=str(row["user_id"]),
        age=age_value,
        gender=None if row.get("gender") is None else str(row["gender"]),
        occupation=None if row.get("occupation") is None else str(row["occupation"]),
        location=None if row.get("location") is None else str(row["location"]),
        extra=extra,
    )


def load_anchors(source: str, n_users: int, *, seed: int = 0) -> list[AnchorUser]:
    """Anchors from a fetched dataset name, a dataset cache or raw folder, or a CSV/JSONL source."""
    path = Path(source)
    if path.suffix in (".csv", ".jsonl") or (
        path.is_dir() and any((path / n).exists() for n in _EVENT_FILES)
    ):
        return load_anchor_files(path, n_users, seed=seed)
    from recworld.data import resolve_dataset

    return anchors_from_dataset(resolve_dataset(source), n_users, seed=seed)
