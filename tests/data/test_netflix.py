"""Netflix Prize loader: both layouts, title quirks, metadata join, and bad input."""

from __future__ import annotations

import calendar
import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest

from helpers.source_writers import copy_fixture
from recworld.data import FORMATS, Dataset, Domain, detect_format, netflix
from recworld.data.netflix import load_netflix, parse_rating_file, read_titles
from recworld.errors import DataError


def midnight(day: str) -> int:
    return calendar.timegm(dt.date.fromisoformat(day).timetuple())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return copy_fixture("netflix", tmp_path / "nf")


@pytest.fixture
def dataset(folder: Path) -> Dataset:
    return load_netflix(folder)


def test_ratings_with_dates_at_utc_midnight(dataset: Dataset) -> None:
    got = {(r.user_id, r.item_id, r.rating, r.timestamp) for r in dataset.interactions.itertuples()}
    assert got == {
        ("1488844", "1", 3.0, midnight("2005-09-06")),
        ("822109", "1", 5.0, midnight("2005-05-13")),
        ("1488844", "2", 4.0, midnight("2004-01-01")),
        ("822109", "3", 1.0, midnight("1999-12-31")),
        ("30878", "3", 2.0, midnight("2005-12-31")),
    }
    assert midnight("2005-09-06") == 1125964800
    assert dataset.domain is Domain.MOVIE


def test_titles_split_on_first_two_commas_latin1_and_null_years(dataset: Dataset) -> None:
    items = dataset.items.set_index("item_id")
    assert items.loc["3", "title"] == "Château, Part 2, the Return"
    assert items.loc["3", "year"] == 1997
    assert items.loc["2", "title"] == "Isle of Man TT 2004 Review"
    assert items.loc["2", "year"] is pd_na()
    assert "4" not in items.index  # titles of movies nobody rated are not kept


def pd_na() -> object:
    import pandas as pd

    return pd.NA


def test_per_movie_layout_gives_the_same_dataset(folder: Path, tmp_path: Path, dataset: Dataset) -> None:
    other = tmp_path / "orig"
    (other / "training_set").mkdir(parents=True)
    (other / "movie_titles.csv").write_bytes((folder / "movie_titles.csv").read_bytes())
    text = "".join(p.read_text() for p in sorted(folder.glob("combined_data_*.txt")))
    blocks = [b for b in text.replace("\r", "").split("\n") if b]
    current: list[str] = []
    for line in [*blocks, "END:"]:
        if line.endswith(":") and current:
            movie = int(current[0][:-1])
            (other / "training_set" / f"mv_{movie:07d}.txt").write_text("\n".join(current) + "\n")
            current = []
        current.append(line)
    assert detect_format(other).name == "netflix"
    again = load_netflix(other)
    assert again.fingerprint() == dataset.fingerprint()


def test_parser_matches_a_line_by_line_reference(tmp_path: Path) -> None:
    gen = np.random.default_rng(3)
    lines: list[str] = []
    want: list[tuple[int, int, int, float]] = []
    for movie in range(1, 40):
        lines.append(f"{movie}:")
        for _ in range(int(gen.integers(0, 30))):
            user, rating = int(gen.integers(1, 2_649_430)), int(gen.integers(1, 6))
            day = dt.date(1999, 11, 11) + dt.timedelta(days=int(gen.integers(0, 2200)))
            lines.append(f"{user},{rating},{day.isoformat()}")
            want.append((user, movie, midnight(day.isoformat()), float(rating)))
    path = tmp_path / "combined_data_9.txt"
    path.write_text("\n".join(lines) + "\n")
    netflix._BLOCK_BYTES = 1 << 10  # force many blocks so the movie id must carry across them
    try:
        cols = parse_rating_file(path)
    finally:
        netflix._BLOCK_BYTES = 64 << 20
    got = list(
        zip(
            cols.user.tolist(),
            cols.movie.tolist(),
            cols.timestamp.tolist(),
            cols.rating.tolist(),
            strict=True,
        )
    )
    assert got == want


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("1:\n5,3,2005-01-01\n5;3;2005-01-01\n", 3, "expected '<movie_id>:'"),
        ("1:\n5,3,2005-01-01\n6,7,2005-01-01\n", 3, "expected"),  # rating outside 1..5
        ("1:\n5,3,2005-02-30\n", 2, "not a calendar date"),
        ("5,3,2005-01-01\n", 1, "before any"),
        ("1:\n\n2:\nabc\n", 4, "got 'abc'"),
    ],
)
def test_bad_rating_line_names_file_and_line(tmp_path: Path, content: str, line: int, message: str) -> None:
    path = tmp_path / "combined_data_1.txt"
    path.write_text(content)
    with pytest.raises(DataError, match=message) as info:
        parse_rating_file(path)
    assert (info.value.path, info.value.line) == (path, line)


def test_bad_title_lines(tmp_path: Path) -> None:
    path = tmp_path / "movie_titles.csv"
    path.write_bytes(b"1,2003,Fine\n2,20x3,Broken year\n")
    with pytest.raises(DataError, match="year") as info:
        read_titles(path)
    assert info.value.line == 2
    path.write_bytes(b"1,2003,Fine\nno commas here\n")
    with pytest.raises(DataError) as info:
        read_titles(path)
    assert info.value.line == 2


def test_ratings_for_an_untitled_movie_are_an_error(folder: Path) -> None:
    (folder / "movie_titles.csv").write_bytes(b"1,2003,Dinosaur Planet\n2,NULL,Isle\n")
    with pytest.raises(
        DataError, match=r"combined_data_2\.txt:1: .*movie 3, which movie_titles\.csv does not list"
    ):
        load_netflix(folder)


def test_metadata_join_by_title_and_year(folder: Path, tmp_path: Path) -> None:
    meta = tmp_path / "meta" / "netflix_meta.jsonl"
    meta.parent.mkdir()
    rows = [
        {
            "title": "Dinosaur Planet",
            "year": 2003,
            "director": ["Pippa Scott"],
            "genres": ["Documentary"],
            "logline": "Dinosaurs, again.",
            "poster": "posters/1.jpg",
        },
        {"title": "Chateau, Part 2, the Return", "year": 1997, "cast": ["A. Actor"]},
        {"title": "Dinosaur Planet", "year": 1990, "director": ["Someone Else"]},
    ]
    meta.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_netflix(folder, metadata=meta)
    items = ds.items.set_index("item_id")
    assert items.loc["1", "director"] == ["Pippa Scott"]
    assert items.loc["1", "logline"] == "Dinosaurs, again."
    assert items.loc["1", "image"] == str((meta.parent / "posters" / "1.jpg").resolve())
    assert items.loc["3", "cast"] == ["A. Actor"]  # accents and case are normalised in the join
    assert items.loc["2", "director"] == []


def test_detect_needs_ratings_and_titles(folder: Path, tmp_path: Path) -> None:
    assert FORMATS["netflix"].detect(folder)
    (folder / "movie_titles.csv").unlink()
    assert not FORMATS["netflix"].detect(folder)
    with pytest.raises(DataError, match="movie_titles"):
        load_netflix(folder)
    assert not FORMATS["netflix"].detect(tmp_path / "nothing")
