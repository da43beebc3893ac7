"""Netflix Prize (KDD Cup 2007) ratings in either published layout, plus movie titles.

``combined_data_*.txt`` (the Kaggle repack) or ``training_set/mv_*.txt`` (the
original release) hold blocks of the form::

    1:
    1488844,3,2005-09-06
    822109,5,2005-05-13

where ``<movie_id>:`` opens a block of ``user_id,rating,YYYY-MM-DD`` rows. Dates
become Unix seconds at UTC midnight. ``movie_titles.csv`` (latin-1) holds
``id,year,title`` where the title may contain commas and the year may be ``NULL``.

Parsing is columnar: each file is streamed through pyarrow's CSV reader as one
string column in blocks, a regular expression validates every line at C speed, and
the movie id of each row comes from a forward fill over the header lines. Python
touches only the (rare) bad line, to name it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recworld.capped import DATASET_FILE_LIMIT, open_regular, read_capped
from recworld.data._tables import undecodable_line
from recworld.data.dataset import Dataset, Domain
from recworld.data.metadata import apply_metadata
from recworld.data.movielens import ids_as_str
from recworld.errors import DataError

FORMAT_NAME = "netflix"
TITLE_FILES = ("movie_titles.csv", "movie_titles.txt")
# Ids of up to 18 digits always fit in int64 (the release's largest is 2,649,429).
_ROW = r"^\d{1,18},[1-5],\d{4}-\d{2}-\d{2}$"
_HEADER = r"^\d{1,18}:$"
_BLOCK_BYTES = 64 << 20


@dataclass(frozen=True)
class RatingColumns:
    """Parsed ratings of one or more files, as parallel int64/float64 arrays."""

    user: np.ndarray
    movie: np.ndarray
    timestamp: np.ndarray
    rating: np.ndarray

    @staticmethod
    def concat(parts: list[RatingColumns]) -> RatingColumns:
        return RatingColumns(
            user=np.concatenate([p.user for p in parts]),
            movie=np.concatenate([p.movie for p in parts]),
            timestamp=np.concatenate([p.timestamp for p in parts]),
            rating=np.concatenate([p.rating for p in parts]),
        )


# -- discovery -----------------------------------------------------------------------------------


def rating_files(root: Path) -> list[Path]:
    """``combined_data_*.txt`` in ``root``, else ``training_set/mv_*.txt`` (or ``mv_*.txt`` in root)."""
    combined = sorted(root.glob("combined_data_*.txt"))
    if combined:
        return combined
    for folder in (root / "training_set", root):
        per_movie = sorted(folder.glob("mv_*.txt"))
        if per_movie:
            return per_movie
    return []


def titles_file(root: Path) -> Path | None:
    for name in TITLE_FILES:
        if (root / name).is_file():
            return root / name
    return None


def _line_batches(path: Path) -> Iterator[object]:
    """The file as blocks of one string column, one row per physical line (blank lines kept)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    try:
        reader = pa_csv.open_csv(
            path,
            read_options=pa_csv.ReadOptions(column_names=["line"], block_size=_BLOCK_BYTES),
            # \x1f never occurs in the data, so every line is exactly one field.
            parse_options=pa_csv.ParseOptions(delimiter="\x1f", quote_char=False, ignore_empty_lines=False),
            convert_options=pa_csv.ConvertOptions(column_types={"line": pa.string()}),
        )
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            return
        raise undecodable_line(path, "utf-8") or DataError(f"cannot read: {exc}", path=path) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc}", path=path) from exc
    try:
        yield from reader
    except pa.ArrowInvalid as exc:
        raise undecodable_line(path, "utf-8") or DataError(f"cannot read: {exc}", path=path) from None


def parse_rating_file(path: Path) -> RatingColumns:
    """Parse one ``combined_data`` / ``mv_`` file; a bad line raises DataError naming it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts: list[RatingColumns] = []
    movie = -1  # the open block's movie id, carried across batches
    first_line = 1
    for batch in _line_batches(path):
        lines = batch.column(0)  # type: ignore[attr-defined]
        lines = pc.utf8_rtrim(pc.fill_null(lines, ""), characters="\r \t")
        if first_line == 1:  # a UTF-8 byte-order mark is read as the text it prefixes
            lines = pc.utf8_ltrim(lines, characters="\ufeff")
        n = len(lines)
        is_header = pc.match_substring_regex(lines, _HEADER).to_numpy(zero_copy_only=False)
        is_row = pc.match_substring_regex(lines, _ROW).to_numpy(zero_copy_only=False)
        is_blank = pc.equal(lines, "").to_numpy(zero_copy_only=False)
        bad = ~(is_header | is_row | is_blank)
        if bad.any():
            at = int(bad.argmax())
            text = lines[at].as_py()
            raise DataError(
                f"expected '<movie_id>:' or 'user,rating,YYYY-MM-DD' (rating 1-5, ids up to 18 digits), "
                f"got {text[:60]!r}",
                path=path,
                line=first_line + at,
            )
        header_at = np.flatnonzero(is_header)
        header_ids = pc.cast(
            pc.utf8_rtrim(pc.take(lines, pa.array(header_at)), characters=":"), pa.int64()
        ).to_numpy()
        # Movie of each line = id of the last header at or before it (carry from earlier batches).
        block = np.cumsum(is_header)
        movie_of_line = np.concatenate([[movie], header_ids])[block]
        rows_at = np.flatnonzero(is_row)
        if rows_at.size:
            orphan = rows_at[movie_of_line[rows_at] < 0]
            if orphan.size:
                raise DataError(
                    "a rating row comes before any '<movie_id>:' line",
                    path=path,
                    line=first_line + int(orphan[0]),
                )
            rows = pc.take(lines, pa.array(rows_at))
            # The regex fixed the shape "<user>,<r>,YYYY-MM-DD", so fields are plain slices.
            user = pc.cast(pc.utf8_slice_codeunits(rows, 0, -13), pa.int64()).to_numpy()
            rating = pc.cast(pc.utf8_slice_codeunits(rows, -12, -11), pa.float64()).to_numpy()
            seconds, bad_day = _dates_to_seconds(pc.utf8_slice_codeunits(rows, -10))
            if bad_day >= 0:
                raise DataError(
                    "not a calendar date", path=path, line=first_line + int(rows_at[bad_day]), field="date"
                )
            parts.append(RatingColumns(user, movie_of_line[rows_at].astype(np.int64), seconds, rating))
        if header_ids.size:
            movie = int(header_ids[-1])
        first_line += n
    if not parts:
        return RatingColumns(*(np.empty(0, dtype=t) for t in (np.int64, np.int64, np.int64, np.float64)))
    return RatingColumns.concat(parts)


def _dates_to_seconds(days: Any) -> tuple[np.ndarray, int]:
    """Unix seconds at UTC midnight for YYYY-MM-DD strings, and the first invalid row (or -1).

    The whole release has about 2,200 distinct days, so each distinct string is parsed once.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = (
        pc.dictionary_encode(days).combine_chunks() if hasattr(days, "chunks") else pc.dictionary_encode(days)
    )
    distinct = encoded.dictionary
    when = pc.strptime(distinct, format="%Y-%m-%d", unit="s", error_is_null=True)
    # strptime rolls "2005-02-30" over to March; printing the date back catches that.
    valid = pc.fill_null(pc.equal(pc.strftime(when, format="%Y-%m-%d"), distinct), False)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    ok = valid.to_numpy(zero_copy_only=False)
    if not ok.all():
        bad_rows = np.flatnonzero(~ok[codes])
        return np.empty(0, dtype=np.int64), int(bad_rows[0])
    seconds = pc.cast(pc.fill_null(when, 0), pa.int64()).to_numpy()
    return seconds[codes].astype(np.int64), -1


# -- titles --------------------------------------------------------------------------------------

_YEAR = re.compile(r"^\d{4}$")
_MOVIE_ID = re.compile(r"\d{1,18}", re.ASCII)


def read_titles(path: Path) -> pd.DataFrame:
    """``item_id, title, year`` from ``movie_titles.csv``: split on the first two commas only."""
    try:
        # Latin-1 as published (every byte is a character); a leading UTF-8 mark is dropped.
        text = read_capped(path, limit=DATASET_FILE_LIMIT).removeprefix(b"\xef\xbb\xbf").decode("latin-1")
    except OSError as exc:
        raise DataError(f"cannot read: {exc}", path=path) from exc
    ids: list[str] = []
    titles: list[str] = []
    years: list[int | None] = []
    first_seen: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        parts = line.split(",", 2)
        if len(parts) != 3 or not _MOVIE_ID.fullmatch(parts[0].strip()):
            raise DataError("expected 'id,year,title' (id: up to 18 digits)", path=path, line=number)
        movie_id, year, title = (p.strip() for p in parts)
        if year.upper() == "NULL" or year == "":
            years.append(None)
        elif _YEAR.match(year):
            years.append(int(year))
        else:
            raise DataError(f"year is neither a 4-digit year nor NULL: {year!r}", path=path, line=number)
        if not title:
            raise DataError("empty title", path=path, line=number, field="title")
        item_id = str(int(movie_id))
        if item_id in first_seen:
            raise DataError(
                f"movie id {item_id} is listed twice (first on line {first_seen[item_id]})",
                path=path,
                line=number,
                field="id",
            )
        first_seen[item_id] = number
        ids.append(item_id)
        titles.append(title)
    if not ids:
        raise DataError("the title file lists no movies", path=path, line=1)
    return pd.DataFrame({"item_id": ids, "title": titles, "year": pd.array(years, dtype="Int64")})


def _unknown_movie(movie: str, files: list[Path], titles: Path) -> DataError:
    """The error for ratings of a movie the title file lacks, at the line that opens its block."""
    message = f"ratings for movie {movie}, which {titles.name} does not list"
    wanted = f"{movie}:".encode()
    for path in files:
        with open_regular(path) as handle:
            for number, raw in enumerate(handle, start=1):
                if raw.strip().removeprefix(b"\xef\xbb\xbf").lstrip(b"0") == wanted.lstrip(b"0"):
                    return DataError(message, path=path, line=number, field="movie_id")
    return DataError(message, path=titles)


# -- loading -------------------------------------------------------------------------------------


def load(path: Path, name: str | None = None) -> Dataset:
    return load_netflix(path, name=name)


def load_netflix(path: Path, *, name: str | None = None, metadata: Path | None = None) -> Dataset:
    """Read a Netflix Prize folder; ``metadata`` adds cast, director, genres, logline, posters."""
    root = Path(path)
    files = rating_files(root)
    if not files:
        raise DataError("no combined_data_*.txt or training_set/mv_*.txt rating files", path=root)
    titles = titles_file(root)
    if titles is None:
        raise DataError("no movie_titles.csv next to the rating files", path=root)
    ratings = RatingColumns.concat([parse_rating_file(f) for f in files])
    if ratings.user.size == 0:
        raise DataError(
            "the rating files hold no ratings", path=files[0] if len(files) == 1 else root, line=1
        )
    items = read_titles(titles)
    known = set(items["item_id"])
    movies = np.unique(ratings.movie).astype(str)
    unknown = [m for m in movies if m not in known]
    if unknown:
        raise _unknown_movie(unknown[0], files, titles)
    items = items[items["item_id"].isin(set(movies))].reset_index(drop=True)
    interactions = pd.DataFrame(
        {
            "user_id": ids_as_str(pd.Series(ratings.user)),
            "item_id": ids_as_str(pd.Series(ratings.movie)),
            "timestamp": ratings.timestamp,
            "rating": ratings.rating,
        }
    )
    dataset = Dataset.from_frames(
        name=name or "netflix",
        domain=Domain.MOVIE,
        interactions=interactions,
        items=items,
        source={
            "format": FORMAT_NAME,
            "path": str(root),
            "rating_files": [f.name for f in files][:10] + (["..."] if len(files) > 10 else []),
        },
    )
    # Cast, director, genres, logline and posters come through the shared title + year join.
    return dataset if metadata is None else apply_metadata(dataset, Path(metadata))
