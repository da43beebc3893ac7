"""Join an optional item-metadata file (CSV or JSONL) onto a dataset's items.

MovieLens has no cast, director, logline or poster, which the knowledge
measures need. Users bring them in one file; see docs/data.md for its schema.
Rows are matched by an id column the items share (``item_id``, ``imdb_id`` or
``tmdb_id``, in that order), or else by normalised title plus year.
"""

from __future__ import annotations

import csv
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pandas as pd

from recworld.data._tables import first_line
from recworld.data.dataset import Dataset
from recworld.errors import DataError

ID_KEYS: tuple[str, ...] = ("item_id", "imdb_id", "tmdb_id")
LIST_FIELDS: tuple[str, ...] = ("cast", "director", "genres")
TEXT_FIELDS: tuple[str, ...] = ("logline", "image", "image_description")
# Column names accepted as aliases in the file.
ALIASES: dict[str, str] = {
    "poster": "image",
    "poster_path": "image",
    "plot": "logline",
    "directors": "director",
}
_LEADING_ARTICLE = re.compile(r"^(.*), (the|a|an|les|la|le|l'|il|el|der|die|das)$", re.IGNORECASE)


def normalise_title(title: str) -> str:
    """Lower-case, strip accents and punctuation, and move a trailing ", The" to the front."""
    text = unicodedata.normalize("NFKD", title.strip())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    match = _LEADING_ARTICLE.match(text)
    if match:
        text = f"{match.group(2)} {match.group(1)}"
    text = re.sub(r"[^\w]+", " ", text.casefold())
    return " ".join(text.split())


def read_metadata(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Rows of a metadata file as (1-based line, record) with canonical field names."""
    if not path.exists():
        raise DataError("metadata file not found", path=path)
    if path.stat().st_size == 0:
        raise DataError("file is empty", path=path, line=1)
    rows = _read_jsonl(path) if path.suffix.lower() in {".jsonl", ".json", ".ndjson"} else _read_csv(path)
    out: list[tuple[int, dict[str, Any]]] = []
    for line, record in rows:
        clean: dict[str, Any] = {}
        for key, value in record.items():
            field = ALIASES.get(key, key)
            clean[field] = _clean(value, field, path, line)
        out.append((line, clean))
    return out


def _read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows: list[tuple[int, dict[str, Any]]] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"not valid utf-8 text at column {exc.start + 1}", path=path, line=number
                ) from exc
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON: {exc.msg}", path=path, line=number) from exc
            if not isinstance(record, dict):
                raise DataError("each line must be a JSON object", path=path, line=number)
            rows.append((number, record))
    return rows


def _read_csv(path: Path) -> list[tuple[int, dict[str, Any]]]:
    first_line(path, "utf-8")  # empty / undecodable header gets a precise error
    rows: list[tuple[int, dict[str, Any]]] = []
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle, strict=True)
            header = next(reader)
            if len(set(header)) != len(header):
                dup = next(h for h in header if header.count(h) > 1)
                raise DataError("the header names this column twice", path=path, line=1, field=dup)
            start = reader.line_num
            for values in reader:
                if not any(values):
                    start = reader.line_num
                    continue
                if len(values) != len(header):
                    raise DataError(
                        f"expected {len(header)} comma-separated fields, found {len(values)}",
                        path=path,
                        line=start + 1,
                    )
                rows.append((start + 1, dict(zip(header, values, strict=True))))
                start = reader.line_num
    except UnicodeDecodeError as exc:
        raise DataError(f"not valid utf-8 text: {exc.reason}", path=path) from exc
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", path=path, line=reader.line_num) from exc
    return rows


def _clean(value: Any, field: str, path: Path, line: int) -> Any:
    if field in LIST_FIELDS:
        if value is None or value == "":
            return []
        if isinstance(value, str):
            return [v.strip() for v in value.split("|") if v.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [v.strip() for v in value if v.strip()]
        raise DataError(
            "expected a list of strings (or a '|'-separated string)", path=path, line=line, field=field
        )
    if field == "year":
        if value is None or value == "":
            return None
        try:
            return int(value)
        except (TypeError, ValueError) as exc:
            raise DataError(f"expected a year, got {value!r}", path=path, line=line, field=field) from exc
    if value is None or value == "":
        return None
    if isinstance(value, (dict, list)):
        raise DataError("expected a single value", path=path, line=line, field=field)
    return str(value)


def _resolve_image(value: str, base: Path) -> str:
    if "://" in value or Path(value).is_absolute():
        return value
    return str((base / value).resolve())


def apply_metadata(dataset: Dataset, path: Path) -> Dataset:
    """Return ``dataset`` with metadata fields merged into its items.

    A non-empty metadata value replaces the source's value. The match report
    (key used, rows, matched items) is stored in ``source["metadata"]``.
    """
    rows = read_metadata(path)
    items = dataset.items
    key = next((k for k in ID_KEYS if k in items.columns and any(k in r for _, r in rows)), None)
    if key is not None:
        lookup = {
            _key_value(key, str(v)): str(i)
            for v, i in zip(items[key], items["item_id"], strict=True)
            if v is not None and not pd.isna(v)
        }
        matches = _match_by_key(rows, key, lookup, path)
    else:
        if not any("title" in r for _, r in rows):
            raise DataError(
                f"no column to match items by: give one of {list(ID_KEYS)} or title (+ year)",
                path=path,
                line=1,
            )
        matches = _match_by_title(rows, items)
    fields = [f for f in (*LIST_FIELDS, *TEXT_FIELDS) if any(f in r for _, r in rows)]
    merged = items.copy()
    index = {item_id: pos for pos, item_id in enumerate(merged["item_id"])}
    for field in fields:
        values = list(merged[field]) if field in merged.columns else [None] * len(merged)
        for item_id, record in matches.items():
            value = record.get(field)
            if value in (None, []):
                continue
            values[index[item_id]] = _resolve_image(value, path.parent) if field == "image" else value
        merged[field] = pd.Series(values, index=merged.index, dtype=object)
    report = {
        "path": str(path),
        "key": key or "title+year",
        "rows": len(rows),
        "matched_items": len(matches),
        "unmatched_rows": len(rows) - len(matches),
        "fields": fields,
    }
    source = {**dataset.source, "metadata": report}
    return Dataset.from_frames(
        dataset.name, dataset.domain, dataset.interactions, merged, dataset.users, source
    )


def _match_by_key(
    rows: list[tuple[int, dict[str, Any]]], key: str, lookup: dict[str, str], path: Path
) -> dict[str, dict[str, Any]]:
    matches: dict[str, dict[str, Any]] = {}
    seen: dict[str, int] = {}
    for line, record in rows:
        raw = record.get(key)
        if raw is None:
            continue
        value = _key_value(key, raw)
        if value in seen:
            raise DataError(
                f"duplicate {key} {value!r} (first on line {seen[value]})", path=path, line=line, field=key
            )
        seen[value] = line
        item_id = lookup.get(value)
        if item_id is not None:
            matches[item_id] = record
    return matches


def _key_value(key: str, value: str) -> str:
    """IMDb/TMDb ids compare without "tt" and leading zeros ("tt0114709" == "114709")."""
    if key == "item_id":
        return value
    return value.strip().removeprefix("tt").lstrip("0") or "0"


def _match_by_title(rows: list[tuple[int, dict[str, Any]]], items: pd.DataFrame) -> dict[str, dict[str, Any]]:
    years = items["year"] if "year" in items.columns else pd.Series([None] * len(items))
    by_title: dict[str, list[tuple[str, int | None]]] = {}
    for item_id, title, year in zip(items["item_id"], items["title"], years, strict=True):
        by_title.setdefault(normalise_title(str(title)), []).append(
            (item_id, None if pd.isna(year) else int(year))
        )
    matches: dict[str, dict[str, Any]] = {}
    for _, record in rows:
        title = record.get("title")
        if title is None:
            continue
        candidates = by_title.get(normalise_title(title), [])
        year = record.get("year")
        if year is not None:
            candidates = [c for c in candidates if c[1] == year]
        # An ambiguous title ("Hamlet" without a year) matches nothing rather than a guess.
        if len(candidates) == 1 and candidates[0][0] not in matches:
            matches[candidates[0][0]] = record
    return matches
