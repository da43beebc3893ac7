"""Bad input gives one DataError naming the file, the 1-based line and the field."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.data_writers import write_ml1m, write_ml25m, write_ml100k, write_recbole
from recworld.data import load_source
from recworld.errors import DataError

Breaker = Callable[[Path], None]


def _append(name: str, data: bytes) -> Breaker:
    def breaker(root: Path) -> None:
        with (root / name).open("ab") as handle:
            handle.write(data)

    return breaker


def _replace_line(name: str, line: int, data: bytes) -> Breaker:
    def breaker(root: Path) -> None:
        lines = (root / name).read_bytes().split(b"\n")
        lines[line - 1] = data
        (root / name).write_bytes(b"\n".join(lines))

    return breaker


def _rewrite(name: str, old: bytes, new: bytes) -> Breaker:
    def breaker(root: Path) -> None:
        path = root / name
        path.write_bytes(path.read_bytes().replace(old, new))

    return breaker


def _empty(name: str) -> Breaker:
    def breaker(root: Path) -> None:
        (root / name).write_bytes(b"")

    return breaker


WRITE = {"ml-100k": write_ml100k, "recbole": write_recbole, "ml-1m": write_ml1m, "ml-25m": write_ml25m}

# (id, format, breaker, file, line, field or None, words in the message)
CASES: list[tuple[str, str, Breaker, str, int, str | None, str]] = [
    ("truncated-last-line", "ml-100k", _append("u.data", b"3\t2\t4"), "u.data", 9, None, "found 3"),
    ("wrong-separator", "ml-100k", _rewrite("u.data", b"\t", b","), "u.data", 1, None, "','"),
    (
        "non-numeric-user",
        "ml-100k",
        _replace_line("u.data", 4, b"abc\t1\t3\t881250949"),
        "u.data",
        4,
        "user_id",
        "integer",
    ),
    (
        "non-numeric-time",
        "ml-100k",
        _replace_line("u.data", 2, b"1\t2\t3\tyesterday"),
        "u.data",
        2,
        "timestamp",
        "integer",
    ),
    (
        "garbled-rating",
        "ml-100k",
        _replace_line("u.data", 5, b"2\t3\t\x01\t881250800"),
        "u.data",
        5,
        "rating",
        "number",
    ),
    ("empty-file", "ml-100k", _empty("u.data"), "u.data", 1, None, "empty"),
    (
        "bad-genre-flag",
        "ml-100k",
        _rewrite(
            "u.item",
            b"Toy Story (1995)|01-Jan-1995||http://us.imdb.com/M/title-exact?1|0",
            b"Toy Story (1995)|01-Jan-1995||http://us.imdb.com/M/title-exact?1|7",
        ),
        "u.item",
        1,
        "unknown",
        "0 or 1",
    ),
    (
        "item-row-short",
        "ml-100k",
        _replace_line("u.item", 3, b"3|unknown||||1|0|0"),
        "u.item",
        3,
        None,
        "expected 24",
    ),
    (
        "duplicate-item",
        "ml-100k",
        _replace_line("u.item", 5, b"4|Dup (1990)|||" + b"|0" * 19),
        "u.item",
        5,
        "item_id",
        "duplicate",
    ),
    (
        "bad-utf8",
        "ml-25m",
        _rewrite("movies.csv", "Misérables".encode(), b"Mis\xe9rables"),
        "movies.csv",
        5,
        None,
        "utf-8",
    ),
    (
        "missing-column",
        "ml-25m",
        _rewrite("ratings.csv", b"userId,movieId,rating,timestamp", b"userId,movieId,rating"),
        "ratings.csv",
        1,
        "timestamp",
        "missing column",
    ),
    (
        "duplicate-header-column",
        "ml-25m",
        _rewrite(
            "ratings.csv", b"userId,movieId,rating,timestamp", b"userId,movieId,rating,timestamp,rating"
        ),
        "ratings.csv",
        1,
        "rating",
        "twice",
    ),
    (
        "repeated-header-line",
        "ml-25m",
        _append("ratings.csv", b"userId,movieId,rating,timestamp\n7,1,3.0,1\n"),
        "ratings.csv",
        10,
        None,
        "header line appears again",
    ),
    (
        "unbalanced-quote",
        "ml-25m",
        _append("movies.csv", b'6,"Broken (1990),Drama\n'),
        "movies.csv",
        7,
        None,
        "",
    ),
    ("csv-empty", "ml-25m", _empty("movies.csv"), "movies.csv", 1, None, "empty"),
    (
        "recbole-missing-timestamp",
        "recbole",
        _rewrite("tiny.inter", b"\ttimestamp:float", b"\ttime:float"),
        "tiny.inter",
        1,
        "timestamp",
        "missing",
    ),
    (
        "recbole-bad-type",
        "recbole",
        _rewrite("tiny.item", b"class:token_seq", b"class:tokens"),
        "tiny.item",
        1,
        "class:tokens",
        "name:type",
    ),
    (
        "recbole-bad-timestamp",
        "recbole",
        _replace_line("tiny.inter", 3, b"1\t2\t3\tsoon"),
        "tiny.inter",
        3,
        "timestamp:float",
        "number",
    ),
    (
        "ml1m-garbled",
        "ml-1m",
        _replace_line("ratings.dat", 2, b"1::1193"),
        "ratings.dat",
        2,
        None,
        "'::'-separated",
    ),
    (
        "ml1m-occupation",
        "ml-1m",
        _replace_line("users.dat", 3, b"3::M::25::42::55117"),
        "users.dat",
        3,
        "occupation",
        "unknown code 42",
    ),
    (
        "ml1m-age",
        "ml-1m",
        _replace_line("users.dat", 2, b"2::M::57::16::70072"),
        "users.dat",
        2,
        "age",
        "unknown code 57",
    ),
]


@pytest.mark.parametrize(
    ("fmt", "breaker", "file", "line", "field", "words"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_bad_input_names_file_line_and_field(
    tmp_path: Path, fmt: str, breaker: Breaker, file: str, line: int, field: str | None, words: str
) -> None:
    root = WRITE[fmt](tmp_path / "src")
    breaker(root)
    with pytest.raises(DataError) as info:
        load_source(root)
    error = info.value
    assert error.path is not None and error.path.name == file
    assert error.line == line
    assert error.field == field
    assert words in str(error)
    assert f"{file}:{line}:" in str(error)


def test_blank_lines_do_not_shift_line_numbers(tmp_path: Path) -> None:
    root = write_ml100k(tmp_path / "src")
    data = (root / "u.data").read_bytes().split(b"\n")
    data[2:2] = [b"", b""]  # two blank lines after line 2
    data[6] = b"1\tx\t3\t5"  # physical line 7
    (root / "u.data").write_bytes(b"\n".join(data))
    with pytest.raises(DataError) as info:
        load_source(root)
    assert (info.value.line, info.value.field) == (7, "item_id")


def test_duplicate_after_blank_lines_points_at_the_physical_line(tmp_path: Path) -> None:
    root = write_ml100k(tmp_path / "src")
    lines = (root / "u.user").read_bytes().split(b"\n")
    lines[1:1] = [b""]
    lines.append(b"2|30|F|other|11111")  # physical line 6 after the blank line and trailing newline
    (root / "u.user").write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(DataError) as info:
        load_source(root)
    assert (info.value.path.name if info.value.path else None, info.value.line) == ("u.user", 7)


def test_unknown_folder_lists_expected_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(DataError, match=r"u\.data"):
        load_source(tmp_path)


def test_explicit_format_must_fit_the_files(tmp_path: Path) -> None:
    root = write_ml1m(tmp_path / "src")
    with pytest.raises(DataError, match="ml-100k format"):
        load_source(root, "ml-100k")


@pytest.mark.parametrize("bad_line", [2, 150_001, 250_000])
def test_bad_line_in_a_large_file_is_found_in_the_right_block(tmp_path: Path, bad_line: int) -> None:
    root = write_ml25m(tmp_path / "src")
    rows = [f"{1 + n % 3},{1 + n % 5},3.5,{881250000 + n}\n" for n in range(249_999)]
    rows[bad_line - 2] = "1,2,3.5,\xe9t\xe9\n"  # line 1 is the header
    (root / "ratings.csv").write_text("userId,movieId,rating,timestamp\n" + "".join(rows), encoding="latin-1")
    with pytest.raises(DataError) as info:
        load_source(root)
    assert info.value.line == bad_line
    assert "not valid utf-8" in str(info.value)
