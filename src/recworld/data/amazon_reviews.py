"""Reading Amazon Reviews 2018 files line by line: gzip, JSON or dict literals, and one review each.

The dumps are large and the published files have quirks (Python dict literals
instead of JSON in some metadata releases), but a broken download is still
broken: a truncated gzip, bad UTF-8, JSON nested absurdly deep, ``NaN`` or a
timestamp of ``1e30`` each becomes one :class:`~recworld.errors.DataError`
naming the file and line.
"""

from __future__ import annotations

import ast
import gzip
import math
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from recworld.capped import check_regular, open_regular
from recworld.data.dataset import MAX_TIMESTAMP, MIN_TIMESTAMP
from recworld.errors import DataError
from recworld.io import parse_json

# Style keys that carry a variant's colour (2018 reviews end every key with a colon).
COLOR_KEYS = frozenset({"color", "colour", "color name", "colour name"})
# The 2018 release rates on a 1-5 star scale.
RATING_SCALE = (1.0, 5.0)
_REVIEW_SCHEMA_KEYS = ("Color:", "Color Name:", "Colour:", "Colour Name:")


def _open_binary(path: Path) -> IO[bytes]:
    if path.name.endswith(".gz"):
        return gzip.GzipFile(check_regular(path), "rb")  # type: ignore[return-value]
    return open_regular(path)


def parse_record(raw: bytes, path: Path, line: int) -> dict[str, Any]:
    """One JSON object, or a Python dict literal as some metadata releases write them."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 (byte {exc.start})", path=path, line=line) from None
    try:
        record = parse_json(text, path=path, line=line)
    except DataError as exc:
        # Only plain syntax errors may be dict literals; deep nesting or NaN stay errors.
        if not exc.detail.startswith("invalid JSON"):
            raise
        try:
            record = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError) as err:
            raise DataError("not a JSON object or dict literal", path=path, line=line) from err
    if not isinstance(record, dict):
        raise DataError("expected one object per line", path=path, line=line)
    return record


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, stripped bytes) for every non-blank line of a (gzipped) file."""
    number = 0
    try:
        with _open_binary(path) as handle:
            for number, raw in enumerate(handle, start=1):
                stripped = raw.strip()
                if stripped:
                    yield number, stripped
    except (OSError, EOFError, zlib.error) as exc:
        # A truncated or corrupt gzip fails while reading the line after the last good one.
        raise DataError(f"corrupt or truncated file: {exc}", path=path, line=number + 1) from None


# -- reviews -------------------------------------------------------------------------------------


def _read_reviews_fast(path: Path) -> pd.DataFrame | None:
    """Columnar parse with pyarrow; None when the file needs the line-by-line reader.

    The fast reader cannot say which line is bad, so any parse error, missing field,
    value out of range or dict-literal line sends the file to :func:`_read_reviews_slow`,
    which names the line.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pa_json

    style = pa.struct([(key, pa.string()) for key in _REVIEW_SCHEMA_KEYS])
    schema = pa.schema(
        [
            ("reviewerID", pa.string()),
            ("asin", pa.string()),
            ("overall", pa.float64()),
            ("unixReviewTime", pa.int64()),
            ("style", style),
        ]
    )
    options = pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        # Large blocks so that one long review never straddles a block boundary.
        table = pa_json.read_json(
            path, read_options=pa_json.ReadOptions(block_size=16 << 20), parse_options=options
        )
        table.validate(full=True)  # invalid UTF-8 in a string is found here, not half-way through
    except (pa.ArrowException, OSError, EOFError, zlib.error):
        return None
    required = ("reviewerID", "asin", "unixReviewTime")
    if table.num_rows == 0 or any(table.column(c).null_count for c in required):
        return None
    stamps = table.column("unixReviewTime").to_numpy().astype(np.int64)
    overall = table.column("overall")
    ratings = overall.to_numpy(zero_copy_only=False).astype(np.float64)
    # pyarrow reads NaN literals; the slow reader refuses them with their line (a null is fine).
    has_nan = pc.any(pc.is_nan(pc.drop_null(overall))).as_py() if len(overall) else False
    if has_nan or not (_stamps_ok(stamps) and _ratings_ok(ratings)):
        return None
    # flatten() applies the struct's own nulls (reviews without a style) to its fields.
    color = pc.coalesce(*table.column("style").combine_chunks().flatten())
    return pd.DataFrame(
        {
            "user_id": pd.Series(table.column("reviewerID").to_numpy(zero_copy_only=False), dtype=str),
            "item_id": pd.Series(table.column("asin").to_numpy(zero_copy_only=False), dtype=str),
            "timestamp": stamps,
            "rating": ratings,
            "raw_color": pd.Series(color.to_pylist(), dtype=object),
        }
    )


def _stamps_ok(stamps: np.ndarray) -> bool:
    return bool(((stamps >= MIN_TIMESTAMP) & (stamps <= MAX_TIMESTAMP)).all())


def _ratings_ok(ratings: np.ndarray) -> bool:
    known = ratings[~np.isnan(ratings)]
    return bool(((known >= RATING_SCALE[0]) & (known <= RATING_SCALE[1])).all())


def _read_reviews_slow(path: Path) -> pd.DataFrame:
    """Line-by-line parse that accepts dict literals and names the file:line of a bad record."""
    users: list[str] = []
    items: list[str] = []
    times: list[int] = []
    ratings: list[float] = []
    colors: list[str | None] = []
    for line, raw in iter_lines(path):
        record = parse_record(raw, path, line)
        users.append(_id_field(record, "reviewerID", path, line))
        items.append(_id_field(record, "asin", path, line))
        times.append(_review_time(record.get("unixReviewTime"), path, line))
        ratings.append(_review_rating(record.get("overall"), path, line))
        colors.append(_raw_style_color(record.get("style")))
    if not users:
        raise DataError("the file holds no reviews", path=path, line=1)
    return pd.DataFrame(
        {
            "user_id": pd.Series(users, dtype=str),
            "item_id": pd.Series(items, dtype=str),
            "timestamp": np.asarray(times, dtype=np.int64),
            "rating": np.asarray(ratings, dtype=np.float64),
            "raw_color": pd.Series(colors, dtype=object),
        }
    )


def _id_field(record: dict[str, Any], key: str, path: Path, line: int) -> str:
    value = record.get(key)
    if value is None:
        raise DataError(f"review lacks {key!r}", path=path, line=line, field=key)
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value).strip() == "":
        raise DataError(f"expected a non-empty id, got {value!r:.40}", path=path, line=line, field=key)
    return str(value)


def _review_time(value: Any, path: Path, line: int) -> int:
    """Unix seconds: an integer (or integral number) inside the calendar, never NaN or 1e30."""
    if value is None:
        raise DataError("review lacks 'unixReviewTime'", path=path, line=line, field="unixReviewTime")
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and isinstance(value, float):
        ok = math.isfinite(value) and value.is_integer()
    if not ok:
        raise DataError("unixReviewTime is not an integer", path=path, line=line, field="unixReviewTime")
    if not MIN_TIMESTAMP <= value <= MAX_TIMESTAMP:
        raise DataError(
            f"unixReviewTime {value!r:.40} is outside the calendar",
            path=path,
            line=line,
            field="unixReviewTime",
        )
    return int(value)


def _review_rating(value: Any, path: Path, line: int) -> float:
    if value is None:
        return math.nan
    try:
        rating = float(value)
    except (TypeError, ValueError):
        rating = math.nan
    if isinstance(value, bool) or not math.isfinite(rating):
        raise DataError("overall is not a number", path=path, line=line, field="overall")
    low, high = RATING_SCALE
    if not low <= rating <= high:
        raise DataError(
            f"overall {rating:g} is outside {low:g}..{high:g}", path=path, line=line, field="overall"
        )
    return rating


def _raw_style_color(style: Any) -> str | None:
    if not isinstance(style, dict):
        return None
    for key, value in style.items():
        if str(key).strip().rstrip(":").strip().lower() in COLOR_KEYS:
            return None if value is None else str(value)
    return None


def read_reviews(path: Path) -> pd.DataFrame:
    """One review file as columns user_id, item_id, timestamp, rating, raw_color."""
    fast = _read_reviews_fast(path)
    return fast if fast is not None else _read_reviews_slow(path)
