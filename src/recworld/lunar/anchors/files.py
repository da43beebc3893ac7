"""Real anchors from the user's own logs: ``events.{csv,jsonl}`` and optional ``users.{csv,jsonl}``.

The layout is documented in ``docs/lunar.md``; every bad row is one
:class:`~recworld.errors.DataError` naming the file, the line and the field. Anchors
guide synthesis and are never written to the synthetic dataset.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from recworld.capped import read_capped
from recworld.data.dataset import MAX_TIMESTAMP, MIN_TIMESTAMP
from recworld.errors import ConfigError, DataError
from recworld.io import iter_json_lines
from recworld.lunar import localtime
from recworld.lunar.anchors.user import AnchorUser, utc_day
from recworld.lunar.schemas import (
    BehaviourRecord,
    BehaviourType,
    Category,
    Demographic,
    FieldValue,
    Provenance,
)
from recworld.seeding import rng

EVENT_FILES = ("events.jsonl", "events.csv")

_USER_FILES = ("users.jsonl", "users.csv")
_DEMO_KEYS = ("age", "gender", "occupation", "location", "timezone")

# An anchor events CSV is read whole: a few million events (ML-25M's ratings are 680 MB).
ANCHOR_CSV_LIMIT = 2 << 30


def is_file_source(path: Path) -> bool:
    """Whether ``path`` is a LUNAR-format events file or a folder holding one (not a dataset)."""
    return path.suffix in (".csv", ".jsonl") or (
        path.is_dir() and any((path / n).exists() for n in EVENT_FILES)
    )


def load_anchor_files(path: Path, n_users: int | None = None, *, seed: int = 0) -> list[AnchorUser]:
    """Read ``events.{csv,jsonl}`` (+ optional ``users.{csv,jsonl}``) from a folder, or one events file."""
    events_path, users_path = _locate(path)
    demos = (
        {d.user_id: d for d in (_parse_user(row, users_path, n) for n, row in _rows(users_path))}
        if users_path
        else {}
    )
    by_user: dict[str, list[BehaviourRecord]] = {}
    day_only: dict[str, dict[str, str]] = {}
    for line, row in _rows(events_path):
        record = _parse_event(row, events_path, line, len(by_user.get(str(row.get("user_id", "")), [])))
        by_user.setdefault(record.user_id, []).append(record)
        if _is_date_only(row["timestamp"]):  # '2024-03-04': the day is known, the time is not
            day_only.setdefault(record.user_id, {})[record.record_id] = utc_day(record.timestamp)
    if not by_user:
        raise DataError("no events", path=events_path)
    ids = sorted(by_user)
    if n_users is not None:
        if n_users > len(ids):
            raise DataError(f"asked for {n_users} users, the file has {len(ids)}", path=events_path)
        ids = sorted(rng(seed, "lunar", "anchors").choice(ids, size=n_users, replace=False).tolist())
    return [
        AnchorUser(
            demos.get(u, Demographic(user_id=u)),
            tuple(sorted(by_user[u], key=lambda r: r.timestamp)),
            day_only.get(u, {}),
        )
        for u in ids
    ]


def _is_date_only(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"\s*\d{4}-\d{2}-\d{2}\s*", value) is not None


def _locate(path: Path) -> tuple[Path, Path | None]:
    if path.is_file():
        return path, None
    if not path.is_dir():
        raise DataError("anchor source not found", path=path)
    events = next((path / n for n in EVENT_FILES if (path / n).exists()), None)
    if events is None:
        raise DataError("folder has neither events.jsonl nor events.csv", path=path)
    users = next((path / n for n in _USER_FILES if (path / n).exists()), None)
    return events, users


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if path.suffix != ".csv":
        yield from iter_json_lines(path)  # bad UTF-8, NaN, deep nesting: DataError at file:line
        return
    raw = read_capped(path, limit=ANCHOR_CSV_LIMIT)
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark is read as the text it prefixes
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})", path=path, line=line) from None
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        for row in reader:
            yield reader.line_num, {k: v for k, v in row.items() if k is not None and v not in (None, "")}
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", path=path, line=reader.line_num) from None


def _parse_time(value: Any, path: Path, line: int) -> int:
    """Unix seconds from a number or ISO-8601 text; NaN, infinities and 1e30 are refused."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and value.strip().isascii():
        seconds: float | int = int(value.strip())
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str):
        seconds = _iso_seconds(value, path, line)
    else:
        raise DataError("missing timestamp", path=path, line=line, field="timestamp")
    if not (math.isfinite(seconds) and MIN_TIMESTAMP <= seconds <= MAX_TIMESTAMP):
        raise DataError(
            f"timestamp {value!r:.40} is not Unix seconds between years 1900 and 9999",
            path=path,
            line=line,
            field="timestamp",
        )
    return int(seconds)


def _iso_seconds(value: str, path: Path, line: int) -> int:
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise DataError(
            f"timestamp {value!r:.40} is neither Unix seconds nor ISO-8601",
            path=path,
            line=line,
            field="timestamp",
        ) from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp())


def _parse_event(row: dict[str, Any], path: Path, line: int, n: int) -> BehaviourRecord:
    for key in ("user_id", "timestamp", "domain", "type"):
        if key not in row:
            raise DataError("missing column", path=path, line=line, field=key)
    domain = _member(Category, row, "domain", path, line)
    btype = _member(BehaviourType, row, "type", path, line)
    fields: dict[str, FieldValue] = {}
    raw_fields = row.get("fields", {})
    if not isinstance(raw_fields, dict):
        raise DataError("'fields' must be an object", path=path, line=line, field="fields")
    for key, value in {**raw_fields, **{k[6:]: v for k, v in row.items() if k.startswith("field.")}}.items():
        if not isinstance(value, str | int | float | bool) or (
            isinstance(value, float) and not math.isfinite(value)
        ):
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


E = TypeVar("E", Category, BehaviourType)


def _member(kind: type[E], row: dict[str, Any], field: str, path: Path, line: int) -> E:
    """The vocabulary member a cell names (case and spaces folded), or a DataError listing the known ones."""
    try:
        return kind(str(row[field]).strip().lower())
    except ValueError as exc:
        known = ", ".join(m.value for m in kind)
        raise DataError(
            f"unknown {field} {row[field]!r}; known: {known}", path=path, line=line, field=field
        ) from exc


def _number(text: str) -> FieldValue:
    """CSV cells are text; numeric ones become numbers so amounts can be summed."""
    try:
        value = float(text)
    except ValueError:
        return text
    if not math.isfinite(value):  # "nan", "inf", "1e400" stay text: no sum or mean may meet them
        return text
    return int(value) if value.is_integer() and "." not in text else value


def _parse_user(row: dict[str, Any], path: Path, line: int) -> Demographic:
    if "user_id" not in row:
        raise DataError("missing column", path=path, line=line, field="user_id")
    age = row.get("age")
    try:
        age_value = None if age is None else int(age)
    except (TypeError, ValueError, OverflowError) as exc:
        raise DataError(f"age {age!r:.40} is not an integer", path=path, line=line, field="age") from exc
    if isinstance(age, bool) or (age_value is not None and not 0 <= age_value <= 150):
        raise DataError(f"age {age!r:.40} is not an age in years", path=path, line=line, field="age")
    extra = {str(k): str(v) for k, v in row.items() if k not in (*_DEMO_KEYS, "user_id")}
    return Demographic(
        user_id=str(row["user_id"]),
        age=age_value,
        gender=None if row.get("gender") is None else str(row["gender"]),
        occupation=None if row.get("occupation") is None else str(row["occupation"]),
        location=None if row.get("location") is None else str(row["location"]),
        extra=extra,
        timezone=_parse_zone(row.get("timezone"), path, line),
    )


def _parse_zone(value: Any, path: Path, line: int) -> str | None:
    """An IANA zone name from a ``timezone`` column (validated here so the error has a line)."""
    if value is None:
        return None
    try:
        localtime.zone(str(value))
    except ConfigError as exc:
        raise DataError(str(exc), path=path, line=line, field="timezone") from None
    return str(value).strip()
