"""MovieLens in the formats GroupLens publishes: ML-100K, ML-1M, ML-25M / ml-latest.

Each loader reads one extracted folder exactly as it comes out of the official
zip and returns a canonical :class:`~recworld.data.dataset.Dataset`. Titles lose
their trailing "(1995)"; the year goes to ``year``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from recworld.data._checks import require_known, require_unique
from recworld.data._tables import (
    Column,
    ColumnKind,
    TableSpec,
    fail_at_row,
    read_table,
)
from recworld.data.dataset import MAX_TIMESTAMP, MIN_TIMESTAMP, Dataset, Domain
from recworld.errors import DataError

INT, FLOAT, TEXT = ColumnKind.INT, ColumnKind.FLOAT, ColumnKind.TEXT

# The 19 genres of ML-100K's u.genre, in flag-column order (used when u.genre is absent).
ML100K_GENRES: tuple[str, ...] = (
    "unknown",
    "Action",
    "Adventure",
    "Animation",
    "Children's",
    "Comedy",
    "Crime",
    "Documentary",
    "Drama",
    "Fantasy",
    "Film-Noir",
    "Horror",
    "Musical",
    "Mystery",
    "Romance",
    "Sci-Fi",
    "Thriller",
    "War",
    "Western",
)
# A flag for "unknown" means the genre is not known, so it adds nothing to the list.
NO_GENRE = frozenset({"unknown", "(no genres listed)"})

# ML-1M README: users.dat occupation codes and age-bucket codes.
ML1M_OCCUPATIONS: dict[int, str] = {
    0: "other",
    1: "academic/educator",
    2: "artist",
    3: "clerical/admin",
    4: "college/grad student",
    5: "customer service",
    6: "doctor/health care",
    7: "executive/managerial",
    8: "farmer",
    9: "homemaker",
    10: "K-12 student",
    11: "lawyer",
    12: "programmer",
    13: "retired",
    14: "sales/marketing",
    15: "scientist",
    16: "self-employed",
    17: "technician/engineer",
    18: "tradesman/craftsman",
    19: "unemployed",
    20: "writer",
}
ML1M_AGE_GROUPS: dict[int, str] = {
    1: "Under 18",
    18: "18-24",
    25: "25-34",
    35: "35-44",
    45: "45-49",
    50: "50-55",
    56: "56+",
}

# "Toy Story (1995)", "Seven (Se7en) (1995) ", "Series (2007-2013)"; the year is the last parenthesis.
_TITLE_YEAR = re.compile(r"^(?P<title>.*?)\s*\((?P<year>\d{4})(?:[-–/][^)]*)?\)\s*$")
_DATE_YEAR = re.compile(r"(\d{4})\s*$")


def split_title(raw: str) -> tuple[str, int | None]:
    """Split "Toy Story (1995)" into ("Toy Story", 1995); a title without a year keeps its text."""
    match = _TITLE_YEAR.match(raw)
    if match is None or not match.group("title"):
        return raw.strip(), None
    return match.group("title"), int(match.group("year"))


def _titles_and_years(raw: pd.Series) -> tuple[list[str], list[int | None]]:
    pairs = [split_title(str(t)) for t in raw]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def ids_as_str(values: pd.Series) -> np.ndarray:
    """Integer ids as strings, converting each distinct id once (25M rows, ~200k distinct)."""
    codes, uniques = pd.factorize(values)
    return np.asarray(uniques.astype(str), dtype=object)[codes]


def _interactions(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "user_id": ids_as_str(frame["user_id"]),
            "item_id": ids_as_str(frame["item_id"]),
            "timestamp": frame["timestamp"].to_numpy(dtype="int64"),
            "rating": frame["rating"].to_numpy(dtype="float64"),
        }
    )


def _optional_text(column: pd.Series) -> pd.Series:
    """Text with None where empty, as object dtype (how extra columns read back from Parquet)."""
    return pd.Series([v or None for v in column], index=column.index, dtype=object)


# The rating scale of each release: 1-5 whole stars, half stars from ML-20M on.
WHOLE_STARS = (1.0, 5.0)
HALF_STARS = (0.5, 5.0)


def _ratings_spec(
    path: Path, sep: str, encoding: str, scale: tuple[float, float], *, header: bool = False
) -> TableSpec:
    names = (
        ("userId", "movieId", "rating", "timestamp")
        if header
        else ("user_id", "item_id", "rating", "timestamp")
    )
    return TableSpec(
        path,
        (
            Column(names[0], INT, low=0),
            Column(names[1], INT, low=0),
            Column(names[2], FLOAT, low=scale[0], high=scale[1]),
            Column(names[3], INT, low=MIN_TIMESTAMP, high=MAX_TIMESTAMP),
        ),
        sep=sep,
        encoding=encoding,
        header=header,
        quoted=header,
    )


# -- ML-100K ---------------------------------------------------------------------------------------


def _ml100k_genres(root: Path) -> tuple[str, ...]:
    path = root / "u.genre"
    if not path.exists():
        return ML100K_GENRES
    spec = TableSpec(path, (Column("genre"), Column("index", INT)), sep="|", encoding="latin-1")
    frame = read_table(spec)
    order = frame["index"].to_numpy()
    if sorted(order.tolist()) != list(range(len(frame))):
        raise DataError("genre indices must be 0..n-1, each once", path=path, field="index")
    return tuple(frame.sort_values("index")["genre"].tolist())


def _ml100k_users(root: Path, ratings: pd.DataFrame, rating_spec: TableSpec) -> pd.DataFrame | None:
    """u.user when present; every rating's user must be listed there."""
    if not (root / "u.user").exists():
        return None
    user_spec = TableSpec(
        root / "u.user",
        (
            Column("user_id", INT, low=0),
            Column("age", INT, low=0, high=150),
            Column("gender"),
            Column("occupation"),
            Column("zip_code", required=False),
        ),
        sep="|",
        encoding="latin-1",
    )
    raw_users = read_table(user_spec)
    require_unique(raw_users, "user_id", user_spec)
    require_known(ratings, "user_id", rating_spec, raw_users["user_id"], "u.user")
    return raw_users.assign(user_id=ids_as_str(raw_users["user_id"]))


def load_ml100k(root: Path, name: str) -> Dataset:
    """GroupLens ML-100K: u.data (tab), u.item and u.user ('|', latin-1), optional u.genre."""
    rating_spec = _ratings_spec(root / "u.data", "\t", "latin-1", WHOLE_STARS)
    ratings = read_table(rating_spec)
    genres = _ml100k_genres(root)
    item_spec = TableSpec(
        root / "u.item",
        (
            Column("item_id", INT, low=0),
            Column("title_raw"),
            Column("release_date", required=False),
            Column("video_release_date", required=False),
            Column("imdb_url", required=False),
            *(Column(g, INT) for g in genres),
        ),
        sep="|",
        encoding="latin-1",
    )
    raw_items = read_table(item_spec)
    require_unique(raw_items, "item_id", item_spec)
    require_known(ratings, "item_id", rating_spec, raw_items["item_id"], "u.item")
    flags = raw_items.loc[:, list(genres)].to_numpy()
    bad = ~np.isin(flags, (0, 1))
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        raise fail_at_row(
            item_spec, row, f"genre flag must be 0 or 1, got {flags[row, col]}", field=genres[col]
        )
    titles, years = _titles_and_years(raw_items["title_raw"])
    for i, date in enumerate(raw_items["release_date"]):
        match = _DATE_YEAR.search(str(date))
        if years[i] is None and match:
            years[i] = int(match.group(1))
    genre_lists = [
        [g for g, f in zip(genres, row, strict=True) if f == 1 and g not in NO_GENRE] for row in flags
    ]
    items = pd.DataFrame(
        {
            "item_id": ids_as_str(raw_items["item_id"]),
            "title": titles,
            "year": pd.array(years, dtype="Int64"),
            "genres": genre_lists,
            "release_date": _optional_text(raw_items["release_date"]),
            "imdb_url": _optional_text(raw_items["imdb_url"]),
        }
    )
    users = _ml100k_users(root, ratings, rating_spec)
    return Dataset.from_frames(
        name, Domain.MOVIE, _interactions(ratings), items, users, source={"format": "ml-100k"}
    )


# -- ML-1M -----------------------------------------------------------------------------------------


def _decode_codes(frame: pd.DataFrame, column: str, table: dict[int, str], spec: TableSpec) -> list[str]:
    known = frame[column].isin(list(table))
    if not known.all():
        row = int((~known).to_numpy().argmax())
        raise fail_at_row(spec, row, f"unknown code {frame[column].iloc[row]}", field=column)
    return [table[int(v)] for v in frame[column]]


def load_ml1m(root: Path, name: str) -> Dataset:
    """GroupLens ML-1M: ratings.dat, movies.dat, users.dat ('::'-separated, latin-1)."""
    rating_spec = _ratings_spec(root / "ratings.dat", "::", "latin-1", WHOLE_STARS)
    ratings = read_table(rating_spec)
    movie_spec = TableSpec(
        root / "movies.dat",
        (Column("item_id", INT, low=0), Column("title_raw"), Column("genres", required=False)),
        sep="::",
        encoding="latin-1",
    )
    movies = read_table(movie_spec)
    require_unique(movies, "item_id", movie_spec)
    require_known(ratings, "item_id", rating_spec, movies["item_id"], "movies.dat")
    titles, years = _titles_and_years(movies["title_raw"])
    items = pd.DataFrame(
        {
            "item_id": ids_as_str(movies["item_id"]),
            "title": titles,
            "year": pd.array(years, dtype="Int64"),
            "genres": _split_genres(movies["genres"]),
        }
    )
    users = None
    if (root / "users.dat").exists():
        user_spec = TableSpec(
            root / "users.dat",
            (
                Column("user_id", INT, low=0),
                Column("gender"),
                Column("age", INT),
                Column("occupation", INT),
                Column("zip_code", required=False),
            ),
            sep="::",
            encoding="latin-1",
        )
        raw = read_table(user_spec)
        require_unique(raw, "user_id", user_spec)
        require_known(ratings, "user_id", rating_spec, raw["user_id"], "users.dat")
        users = pd.DataFrame(
            {
                "user_id": ids_as_str(raw["user_id"]),
                # The code is the bucket's lower bound (1 stands for "under 18").
                "age": raw["age"].to_numpy(),
                "age_group": _decode_codes(raw, "age", ML1M_AGE_GROUPS, user_spec),
                "gender": raw["gender"].to_numpy(),
                "occupation": _decode_codes(raw, "occupation", ML1M_OCCUPATIONS, user_spec),
                "zip_code": raw["zip_code"].to_numpy(),
            }
        )
    return Dataset.from_frames(
        name, Domain.MOVIE, _interactions(ratings), items, users, source={"format": "ml-1m"}
    )


def _split_genres(column: pd.Series) -> list[list[str]]:
    return [[g for g in str(v).split("|") if g and g not in NO_GENRE] for v in column]


# -- ML-25M / ml-latest / ml-latest-small ----------------------------------------------------------


def load_ml25m(root: Path, name: str) -> Dataset:
    """GroupLens ML-25M and ml-latest(-small): ratings.csv, movies.csv, optional links.csv (UTF-8 CSV)."""
    rating_spec = _ratings_spec(root / "ratings.csv", ",", "utf-8", HALF_STARS, header=True)
    ratings = read_table(rating_spec)
    movie_spec = TableSpec(
        root / "movies.csv",
        (Column("movieId", INT, low=0), Column("title"), Column("genres", required=False)),
        sep=",",
        header=True,
        quoted=True,
    )
    movies = read_table(movie_spec)
    require_unique(movies, "movieId", movie_spec)
    require_known(ratings, "movieId", rating_spec, movies["movieId"], "movies.csv")
    ratings.columns = pd.Index(["user_id", "item_id", "rating", "timestamp"])
    titles, years = _titles_and_years(movies["title"])
    items = pd.DataFrame(
        {
            "item_id": ids_as_str(movies["movieId"]),
            "title": titles,
            "year": pd.array(years, dtype="Int64"),
            "genres": _split_genres(movies["genres"]),
        }
    )
    links_path = root / "links.csv"
    if links_path.exists():
        link_spec = TableSpec(
            links_path,
            (Column("movieId", INT), Column("imdbId", required=False), Column("tmdbId", required=False)),
            sep=",",
            header=True,
            quoted=True,
        )
        links = read_table(link_spec)
        require_unique(links, "movieId", link_spec)
        # Kept as strings: IMDb ids carry leading zeros ("0114709") that metadata joins rely on.
        item_ids = ids_as_str(links["movieId"])
        for column, raw in (("imdb_id", links["imdbId"]), ("tmdb_id", links["tmdbId"])):
            lookup = {i: (v or None) for i, v in zip(item_ids, raw, strict=True)}
            items[column] = pd.Series(
                [lookup.get(i) for i in items["item_id"]], index=items.index, dtype=object
            )
    return Dataset.from_frames(
        name, Domain.MOVIE, _interactions(ratings), items, None, source={"format": "ml-25m"}
    )
