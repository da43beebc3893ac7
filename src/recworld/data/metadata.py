"""Join an optional item-metadata file (CSV or JSONL) onto a dataset's items.

MovieLens has no cast, director, logline or poster, which the knowledge
measures need. Users bring them in one file; see docs/data.md for its schema.
Rows are matched by an id column the items share (``item_id``, ``imdb_id`` or
``tmdb_id``, in that order); a row without that id is matched by normalised
title plus year. The join's report (:mod:`recworld.data.metadata_match`) names
every row that matched nothing, and why.
"""

from __future__ import annotations

import csv
import re
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from recworld.capped import open_text
from recworld.data._tables import first_line, undecodable_line
from recworld.data.dataset import Dataset
from recworld.data.metadata_match import (
    SHOWN_ITEMS,
    SHOWN_ROWS,
    FieldCoverage,
    ItemRef,
    MetadataMatch,
    UnmatchedRow,
    ratio,
)
from recworld.errors import DataError
from recworld.io import iter_json_lines

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
    is_json = path.suffix.lower() in {".jsonl", ".json", ".ndjson"}
    rows = list(iter_json_lines(path)) if is_json else _read_csv(path)
    if not rows:
        raise DataError("the file holds no records", path=path, line=1 if is_json else 2)
    out: list[tuple[int, dict[str, Any]]] = []
    for line, record in rows:
        clean: dict[str, Any] = {}
        for key, value in record.items():
            field = ALIASES.get(key, key)
            clean[field] = _clean(value, field, path, line)
        out.append((line, clean))
    return out


def _read_csv(path: Path) -> list[tuple[int, dict[str, Any]]]:
    first_line(path, "utf-8")  # empty / undecodable header gets a precise error
    rows: list[tuple[int, dict[str, Any]]] = []
    try:
        # utf-8-sig: a byte-order mark is read as the text it prefixes, not as part of a name.
        with open_text(path, "utf-8-sig", newline="") as handle:
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
        raise undecodable_line(path, "utf-8") or DataError(
            f"not valid utf-8 text: {exc.reason}", path=path
        ) from None
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
            year = None if isinstance(value, bool) else int(value)
        except (TypeError, ValueError, OverflowError):
            year = None
        if year is None or not 1 <= year <= 9999 or (isinstance(value, float) and not value.is_integer()):
            raise DataError(f"expected a year, got {value!r:.40}", path=path, line=line, field=field)
        return year
    if value is None or value == "":
        return None
    if isinstance(value, (dict, list)):
        raise DataError("expected a single value", path=path, line=line, field=field)
    return str(value)


def _resolve_image(value: str, base: Path) -> str:
    if "://" in value or Path(value).is_absolute():
        return value
    return str((base / value).resolve())


Row = tuple[int, dict[str, Any]]
TITLE_KEY = "title+year"


def apply_metadata(dataset: Dataset, path: Path) -> Dataset:
    """Return ``dataset`` with metadata fields merged into its items.

    A non-empty metadata value replaces the source's value. The match report
    (:class:`~recworld.data.metadata_match.MetadataMatch`, as JSON) is stored
    in ``source["metadata"]``.
    """
    rows = read_metadata(path)
    items = dataset.items
    key = next((k for k in ID_KEYS if k in items.columns and any(k in r for _, r in rows)), None)
    if key is None and not any("title" in r for _, r in rows):
        raise DataError(
            f"no column to match items by: give one of {list(ID_KEYS)} or title (+ year)",
            path=path,
            line=1,
        )
    matcher = _Matcher(items, key)
    matches, lines, by_key, unmatched = matcher.match(rows, path)
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
    report = MetadataMatch(
        path=str(path),
        key=key or TITLE_KEY,
        by_key=dict(by_key),
        rows=len(rows),
        matched_rows=len(matches),
        unmatched_rows=len(unmatched),
        matched_items=len(matches),
        dataset_items=len(merged),
        item_coverage=ratio(len(matches), len(merged)),
        row_coverage=ratio(len(matches), len(rows)),
        fields=fields,
        field_coverage={f: _coverage(merged[f], matches, f) for f in fields},
        unmatched=unmatched[:SHOWN_ROWS],
        unmatched_more=max(0, len(unmatched) - SHOWN_ROWS),
        **_items_without(merged, lines),
    )
    source = {**dataset.source, "metadata": report.to_json()}
    return Dataset.from_frames(
        dataset.name, dataset.domain, dataset.interactions, merged, dataset.users, source
    )


def _coverage(column: pd.Series, matches: dict[str, dict[str, Any]], field: str) -> FieldCoverage:
    from_file = sum(1 for record in matches.values() if record.get(field) not in (None, []))
    filled = int(sum(1 for v in column if _present(v)))
    return FieldCoverage(from_file=from_file, filled=filled, coverage=ratio(filled, len(column)))


def _present(value: Any) -> bool:
    if value is None or isinstance(value, str):
        return bool(value)
    if hasattr(value, "__len__"):  # lists, and numpy arrays once read back from Parquet
        return len(value) > 0
    return not bool(pd.isna(value))


def _items_without(items: pd.DataFrame, lines: dict[str, int]) -> dict[str, Any]:
    missing = [i for i in range(len(items)) if items["item_id"].iat[i] not in lines]
    titles = items["title"] if "title" in items.columns else None
    examples = [
        ItemRef(
            item_id=str(items["item_id"].iat[i]),
            title=titles.iat[i] if titles is not None and isinstance(titles.iat[i], str) else None,
        )
        for i in missing[:SHOWN_ITEMS]
    ]
    return {"items_without_metadata": len(missing), "items_without_metadata_examples": examples}


class _Matcher:
    """Matches one row at a time: by the id column when the row has one, else by title (+ year)."""

    def __init__(self, items: pd.DataFrame, key: str | None) -> None:
        self.key = key
        self.ids: dict[str, str] = {}
        if key is not None:
            self.ids = {
                _key_value(key, str(v)): str(i)
                for v, i in zip(items[key], items["item_id"], strict=True)
                if v is not None and not pd.isna(v)
            }
        years = items["year"] if "year" in items.columns else pd.Series([None] * len(items))
        self.titles: dict[str, list[tuple[str, int | None]]] = {}
        for item_id, title, year in zip(items["item_id"], items["title"], years, strict=True):
            self.titles.setdefault(normalise_title(str(title)), []).append(
                (str(item_id), None if pd.isna(year) else int(year))
            )

    def match(
        self, rows: list[Row], path: Path
    ) -> tuple[dict[str, dict[str, Any]], dict[str, int], Counter[str], list[UnmatchedRow]]:
        """Matched records and lines by item id, matched rows per key, and the unmatched rows."""
        matches: dict[str, dict[str, Any]] = {}
        lines: dict[str, int] = {}
        by_key: Counter[str] = Counter()
        unmatched: list[UnmatchedRow] = []
        seen: dict[str, int] = {}
        for line, record in rows:
            raw = record.get(self.key) if self.key is not None else None
            if self.key is not None and raw is not None:
                value = _key_value(self.key, raw)
                if value in seen:
                    raise DataError(
                        f"duplicate {self.key} {value!r} (first on line {seen[value]})",
                        path=path,
                        line=line,
                        field=self.key,
                    )
                seen[value] = line
            item_id, used, reason = self._one(record, raw)
            first = lines.get(item_id) if item_id is not None else None
            if first is not None:
                item_id, reason = None, f"item {item_id} was already matched by line {first}"
            if item_id is None or used is None:
                unmatched.append(UnmatchedRow(line=line, keys=self._keys(record), reason=reason))
                continue
            matches[item_id], lines[item_id] = record, line
            by_key[used] += 1
        return matches, lines, by_key, unmatched

    def _one(self, record: dict[str, Any], raw: Any) -> tuple[str | None, str | None, str]:
        if self.key is not None and raw is not None:
            item_id = self.ids.get(_key_value(self.key, raw))
            return (item_id, self.key, "") if item_id else (None, None, f"no item has this {self.key}")
        title = record.get("title")
        if title is None:
            return None, None, f"no {self.key} and no title" if self.key else "no title"
        candidates = self.titles.get(normalise_title(title), [])
        if not candidates:
            return None, None, "no item has this title"
        year = record.get("year")
        if year is not None:
            same = [c for c in candidates if c[1] == year]
            if not same:
                years = sorted({str(c[1]) for c in candidates if c[1] is not None}) or ["no year"]
                return None, None, f"the title's year is {', '.join(years)}"
            candidates = same
        if len(candidates) > 1:
            # An ambiguous title ("Hamlet" without a year) matches nothing rather than a guess.
            return None, None, f"{len(candidates)} items have this title" + ("" if year else "; add a year")
        return candidates[0][0], TITLE_KEY, ""

    def _keys(self, record: dict[str, Any]) -> dict[str, str | int]:
        names = [*([self.key] if self.key else []), "title", "year"]
        return {n: record[n] for n in names if isinstance(record.get(n), (str, int))}


def _key_value(key: str, value: str) -> str:
    """IMDb/TMDb ids compare without "tt" and leading zeros ("tt0114709" == "114709")."""
    if key == "item_id":
        return value
    return value.strip().removeprefix("tt").lstrip("0") or "0"
