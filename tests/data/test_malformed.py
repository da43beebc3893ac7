"""Every malformed input to every loader is one DataError naming file, line and field; the CLI exits 2.

One table of cases. Each writes a small source in its published format (the writers of
``data_writers`` / ``source_writers``), breaks one thing, runs the real ``recworld``
entry point and checks: exit code 2, ``FILE:LINE:`` (and the field) on stderr, no
traceback, and nothing left behind (no ``--out`` folder, no cached or fetched dataset).
Most cases call ``recworld.cli.main`` in-process for speed; a handful run the installed
``recworld`` script in a subprocess, which is what a user runs.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from helpers.cli import run_recworld
from helpers.data_writers import N_INTERACTIONS, write_ml1m, write_ml25m, write_ml100k, write_recbole
from helpers.source_writers import write_amazon_world, write_lastfm_world, write_netflix_world
from recworld import paths
from recworld.data import load_source
from recworld.lunar.anchors import load_anchor_files

Make = Callable[[Path], list[str]]  # writes the broken source under tmp, returns the CLI arguments
BOM = b"\xef\xbb\xbf"


class Case(NamedTuple):
    id: str
    make: Make
    file: str
    line: int | None
    field: str | None = None


# -- file surgery --------------------------------------------------------------------------------


def _set_line(path: Path, line: int, data: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = data
    path.write_bytes(b"\n".join(lines))


def _add_line(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data + b"\n")


def _gz_lines(path: Path) -> list[bytes]:
    return gzip.decompress(path.read_bytes()).split(b"\n")


def _gz_set_line(path: Path, line: int, data: bytes) -> None:
    lines = _gz_lines(path)
    lines[line - 1] = data
    path.write_bytes(gzip.compress(b"\n".join(lines)))


DEEP = b'{"a": ' * 100 + b"1" + b"}" * 100


# -- commands ------------------------------------------------------------------------------------


def info(root: Path, *extra: str) -> list[str]:
    return ["data", "info", str(root), *extra]


def build(root: Path) -> list[str]:
    return ["build", "--dataset", str(root), "--out", str(root.parent / "out")]


def synth(events: Path) -> list[str]:
    out = events.parent / "out"
    return ["lunar", "synth", "--anchors", str(events), "--out", str(out), "--model", "scripted"]


# -- makers: one per format, breaking one file -----------------------------------------------------


def ml100k(file: str, line: int, data: bytes, command: Callable[[Path], list[str]] = info) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_ml100k(tmp / "ml-100k")
        _set_line(root / file, line, data)
        return command(root)

    return make


def ml100k_whole(file: str, data: bytes) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_ml100k(tmp / "ml-100k")
        (root / file).write_bytes(data)
        return info(root)

    return make


def ml1m(file: str, line: int, data: bytes) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_ml1m(tmp / "ml-1m")
        _set_line(root / file, line, data)
        return build(root)

    return make


def ml25m(file: str, line: int | None, data: bytes) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_ml25m(tmp / "ml-latest-small")
        if line is None:
            (root / file).write_bytes(data)
        else:
            _set_line(root / file, line, data)
        return info(root)

    return make


def recbole(file: str, line: int | None, data: bytes) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_recbole(tmp / "tiny")
        if line is None:
            (root / file).write_bytes(data)
        else:
            _set_line(root / file, line, data)
        return info(root)

    return make


def amazon(file: str, line: int, data: bytes) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_amazon_world(tmp / "amazon")
        _gz_set_line(root / file, line, data)
        return info(root)

    return make


def amazon_bytes(file: str, change: Callable[[bytes], bytes]) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_amazon_world(tmp / "amazon")
        path = root / file
        path.write_bytes(change(path.read_bytes()))
        return info(root)

    return make


def _flip_middle(data: bytes) -> bytes:
    mid = len(data) // 2
    return data[:mid] + bytes(b ^ 0xFF for b in data[mid : mid + 8]) + data[mid + 8 :]


def netflix(file: str, line: int, data: bytes) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_netflix_world(tmp / "netflix")
        _set_line(root / file, line, data)
        return info(root)

    return make


def netflix_per_movie(text: bytes) -> Make:
    """The original release's layout: training_set/mv_<id>.txt plus movie_titles.txt."""

    def make(tmp: Path) -> list[str]:
        root = tmp / "netflix"
        (root / "training_set").mkdir(parents=True)
        (root / "training_set" / "mv_0000001.txt").write_bytes(text)
        (root / "movie_titles.txt").write_bytes(b"1,2003,Dinosaur Planet\n")
        return info(root)

    return make


def lastfm(file: str, line: int, data: bytes) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_lastfm_world(tmp / "lastfm")
        _set_line(root / file, line, data + b"\r")
        return info(root)

    return make


def metadata(name: str, text: bytes) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_ml25m(tmp / "ml-latest-small")
        (tmp / name).write_bytes(text)
        return info(root, "--metadata", str(tmp / name))

    return make


def anchors(name: str, text: bytes) -> Make:
    def make(tmp: Path) -> list[str]:
        (tmp / name).write_bytes(text)
        return synth(tmp / name)

    return make


def _event(stamp: str, user: str = "u1") -> bytes:
    return (
        b'{"user_id": "' + user.encode() + b'", "timestamp": ' + stamp.encode() + b', "domain": "movies", '
        b'"type": "watch", "fields": {"title": "Heat"}}'
    )


EVENTS_CSV = b"user_id,timestamp,domain,type,field.title\nu1,1700000000,movies,watch,Heat\n"


def cache(damage: Callable[[Path], None]) -> Make:
    def make(tmp: Path) -> list[str]:
        saved = load_source(write_ml100k(tmp / "ml-100k")).save(tmp / "cache")
        shutil.rmtree(paths.home() / "cache")  # only the saved copy remains
        damage(saved)
        return info(saved)

    return make


def _truncate(name: str) -> Callable[[Path], None]:
    def damage(root: Path) -> None:
        data = (root / name).read_bytes()
        (root / name).write_bytes(data[: len(data) // 2])

    return damage


def _cut_json(root: Path) -> None:
    (root / "dataset.json").write_bytes(b'{"schema": "recworld.dataset/1",\n "name": "ml-1')


def zipped(damage: Callable[[bytes], bytes], compression: int = zipfile.ZIP_DEFLATED) -> Make:
    def make(tmp: Path) -> list[str]:
        root = write_ml100k(tmp / "ml-100k")
        archive = tmp / "ml-100k.zip"
        with zipfile.ZipFile(archive, "w", compression) as zf:
            for path in sorted(root.iterdir()):
                zf.write(path, f"ml-100k/{path.name}")
        archive.write_bytes(damage(archive.read_bytes()))
        return ["data", "fetch", "ml-100k", "--from", str(archive)]

    return make


def _method_99(data: bytes) -> bytes:
    """Mark every member as compressed with method 99 (AES), which zipfile cannot decode."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        at = out.find(signature)
        while at >= 0:
            out[at + offset : at + offset + 2] = (99).to_bytes(2, "little")
            at = out.find(signature, at + 4)
    return bytes(out)


def _corrupt_first_member(data: bytes) -> bytes:
    start = data.find(b"PK\x03\x04") + 30 + len(b"ml-100k/u.data")
    return data[:start] + bytes(b ^ 0x5A for b in data[start : start + 40]) + data[start + 40 :]


# -- the table -------------------------------------------------------------------------------------

CASES: list[Case] = [
    # MovieLens 100K (tab / '|', latin-1)
    Case("ml100k-ts-1e30", ml100k("u.data", 2, b"1\t2\t3\t1e30"), "u.data", 2, "timestamp"),
    Case("ml100k-ts-nan", ml100k("u.data", 3, b"1\t1\t5\tNaN"), "u.data", 3, "timestamp"),
    Case("ml100k-ts-ms", ml100k("u.data", 4, b"3\t4\t2\t881251000000000"), "u.data", 4, "timestamp"),
    Case(
        "ml100k-id-overflow",
        ml100k("u.data", 1, b"99999999999999999999\t1\t4\t881250950"),
        "u.data",
        1,
        "user_id",
    ),
    Case("ml100k-rating-negative", ml100k("u.data", 2, b"1\t2\t-3\t881250949"), "u.data", 2, "rating"),
    Case("ml100k-rating-7", ml100k("u.data", 2, b"1\t2\t7\t881250949"), "u.data", 2, "rating"),
    Case("ml100k-unknown-item", ml100k("u.data", 5, b"2\t99\t1\t881250800", build), "u.data", 5, "item_id"),
    Case("ml100k-unknown-user", ml100k("u.data", 6, b"77\t4\t4\t881250990"), "u.data", 6, "user_id"),
    Case("ml100k-dup-user", ml100k("u.user", 3, b"1|30|F|other|11111"), "u.user", 3, "user_id"),
    Case("ml100k-whitespace-only", ml100k_whole("u.data", b"   \n \t \n"), "u.data", 1),
    # MovieLens 1M ('::', latin-1), through `recworld build`
    Case("ml1m-ts-infinity", ml1m("ratings.dat", 2, b"1::2::3::inf"), "ratings.dat", 2, "timestamp"),
    Case("ml1m-unknown-item", ml1m("ratings.dat", 3, b"1::42::5::881250900"), "ratings.dat", 3, "item_id"),
    Case("ml1m-rating-0", ml1m("ratings.dat", 1, b"2::1::0::881250950"), "ratings.dat", 1, "rating"),
    Case("ml1m-dup-movie", ml1m("movies.dat", 5, b"1::Again (1990)::Drama"), "movies.dat", 5, "item_id"),
    # MovieLens 25M / latest (UTF-8 CSV with a header)
    Case("ml25m-bad-utf8", ml25m("movies.csv", 5, b"4,Mis\xe9rables (1995),Drama"), "movies.csv", 5),
    Case(
        "ml25m-header-only",
        ml25m("ratings.csv", None, b"userId,movieId,rating,timestamp\n"),
        "ratings.csv",
        2,
    ),
    Case("ml25m-whitespace-only", ml25m("movies.csv", None, b"  \n\n"), "movies.csv", 1),
    Case("ml25m-ts-1e400", ml25m("ratings.csv", 2, b"2,1,4.0,1e400"), "ratings.csv", 2, "timestamp"),
    Case("ml25m-rating-nan", ml25m("ratings.csv", 3, b"1,2,NaN,881250949"), "ratings.csv", 3, "rating"),
    Case("ml25m-rating-5.5", ml25m("ratings.csv", 4, b"1,1,5.5,881250900"), "ratings.csv", 4, "rating"),
    Case("ml25m-dup-movie", ml25m("movies.csv", 6, b"1,Twice (1990),Drama"), "movies.csv", 6, "movieId"),
    # RecBole atomic files (UTF-8, name:type header)
    Case("recbole-ts-1e30", recbole("tiny.inter", 2, b"2\t1\t4\t1e30"), "tiny.inter", 2, "timestamp:float"),
    Case("recbole-ts-nan", recbole("tiny.inter", 3, b"1\t2\t3\tnan"), "tiny.inter", 3, "timestamp:float"),
    Case(
        "recbole-rating-neg",
        recbole("tiny.inter", 4, b"1\t1\t-5\t881250900"),
        "tiny.inter",
        4,
        "rating:float",
    ),
    Case(
        "recbole-unknown-item", recbole("tiny.inter", 5, b"3\t77\t2\t881251000"), "tiny.inter", 5, "item_id"
    ),
    Case("recbole-dup-item", recbole("tiny.item", 6, b"1\tAgain\t1990\tDrama"), "tiny.item", 6, "item_id"),
    Case("recbole-bad-utf8", recbole("tiny.item", 3, b"2\tCaf\xe9\t1993\tComedy"), "tiny.item", 3),
    Case(
        "recbole-header-only",
        recbole("tiny.inter", None, b"user_id:token\titem_id:token\trating:float\ttimestamp:float\n"),
        "tiny.inter",
        2,
    ),
    # Amazon Reviews 2018 (gzipped JSON lines)
    Case("amazon-deep-json", amazon("Tiny_5.json.gz", 2, DEEP), "Tiny_5.json.gz", 2),
    Case(
        "amazon-rating-nan",
        amazon("Tiny_5.json.gz", 3, b'{"overall": NaN, "reviewerID": "1", "asin": "1", "unixReviewTime": 5}'),
        "Tiny_5.json.gz",
        3,
    ),
    Case(
        "amazon-ts-1e30",
        amazon(
            "Tiny_5.json.gz", 4, b'{"overall": 2.0, "reviewerID": "3", "asin": "4", "unixReviewTime": 1e30}'
        ),
        "Tiny_5.json.gz",
        4,
        "unixReviewTime",
    ),
    Case(
        "amazon-ts-infinity",
        amazon(
            "Tiny_5.json.gz",
            1,
            b'{"overall": 4.0, "reviewerID": "2", "asin": "1", "unixReviewTime": Infinity}',
        ),
        "Tiny_5.json.gz",
        1,
    ),
    Case(
        "amazon-rating-9",
        amazon(
            "Tiny_5.json.gz",
            5,
            b'{"overall": 9.0, "reviewerID": "2", "asin": "3", "unixReviewTime": 881250800}',
        ),
        "Tiny_5.json.gz",
        5,
        "overall",
    ),
    Case(
        "amazon-bad-utf8",
        amazon(
            "Tiny_5.json.gz", 6, b'{"overall": 4.0, "reviewerID": "\xff", "asin": "4", "unixReviewTime": 8}'
        ),
        "Tiny_5.json.gz",
        6,
    ),
    Case(
        "amazon-gzip-truncated",
        amazon_bytes("Tiny_5.json.gz", lambda b: b[: len(b) - 12]),
        "Tiny_5.json.gz",
        None,
    ),
    Case("amazon-gzip-corrupt", amazon_bytes("Tiny_5.json.gz", _flip_middle), "Tiny_5.json.gz", None),
    Case(
        "amazon-meta-deep-json",
        amazon("meta_Tiny.json.gz", 2, DEEP[:-1] + b', "asin": "2"}'),
        "meta_Tiny.json.gz",
        2,
    ),
    Case(
        "amazon-whitespace-only",
        amazon_bytes("Tiny_5.json.gz", lambda b: gzip.compress(b"  \n\n")),
        "Tiny_5.json.gz",
        1,
    ),
    # Netflix Prize: combined_data_*.txt and training_set/mv_*.txt, titles in latin-1
    Case(
        "netflix-id-overflow",
        netflix("combined_data_1.txt", 2, b"123456789012345678901,3,2005-09-06"),
        "combined_data_1.txt",
        2,
    ),
    Case(
        "netflix-bad-utf8", netflix("combined_data_1.txt", 3, b"1,5,2005-\xff9-06"), "combined_data_1.txt", 3
    ),
    Case(
        "netflix-unknown-movie",
        netflix("combined_data_1.txt", 1, b"9:"),
        "combined_data_1.txt",
        1,
        "movie_id",
    ),
    Case("netflix-dup-title", netflix("movie_titles.csv", 3, b"1,1999,Again"), "movie_titles.csv", 3, "id"),
    Case(
        "netflix-title-id-not-ascii",
        netflix("movie_titles.csv", 2, b"\xb2,1992,Squared"),
        "movie_titles.csv",
        2,
    ),
    Case("netflix-mv-rating-6", netflix_per_movie(b"1:\n6,6,2005-01-01\n"), "mv_0000001.txt", 2),
    Case("netflix-mv-empty", netflix_per_movie(b"  \n\n"), "mv_0000001.txt", 1),
    # Last.fm HetRec 2011 (tab-separated with a header, CRLF)
    Case("lastfm-dup-tag", lastfm("tags.dat", 4, b"1\tpunk"), "tags.dat", 4, "tagID"),
    Case(
        "lastfm-dup-artist", lastfm("artists.dat", 3, b"1\tAgain\thttp://x\thttp://y"), "artists.dat", 3, "id"
    ),
    Case(
        "lastfm-unknown-artist",
        lastfm("user_artists.dat", 2, b"2\t99\t40"),
        "user_artists.dat",
        2,
        "artistID",
    ),
    Case(
        "lastfm-weight-negative", lastfm("user_artists.dat", 3, b"1\t2\t-30"), "user_artists.dat", 3, "weight"
    ),
    Case(
        "lastfm-ts-overflow",
        lastfm("user_taggedartists-timestamps.dat", 2, b"2\t1\t1\t99999999999999999999"),
        "user_taggedartists-timestamps.dat",
        2,
        "timestamp",
    ),
    # Item metadata joined with --metadata (CSV and JSON lines)
    Case("meta-jsonl-deep", metadata("meta.jsonl", b'{"item_id": "1"}\n' + DEEP + b"\n"), "meta.jsonl", 2),
    Case("meta-jsonl-nan", metadata("meta.jsonl", b'{"item_id": "1", "year": NaN}\n'), "meta.jsonl", 1),
    Case(
        "meta-jsonl-year-1e400",
        metadata("meta.jsonl", b'\n{"item_id": "1", "year": 1e400}\n'),
        "meta.jsonl",
        2,
        "year",
    ),
    Case("meta-csv-bad-utf8", metadata("meta.csv", b"item_id,logline\n1,ok\n2,caf\xe9\n"), "meta.csv", 3),
    Case("meta-csv-header-only", metadata("meta.csv", b"item_id,cast\n"), "meta.csv", 2),
    Case("meta-csv-dup-id", metadata("meta.csv", b"item_id,cast\n1,A\n1,B\n"), "meta.csv", 3, "item_id"),
    # LUNAR anchor logs (recworld lunar synth --anchors)
    Case(
        "anchors-ts-nan",
        anchors("events.jsonl", _event("1700000000") + b"\n" + _event("NaN") + b"\n"),
        "events.jsonl",
        2,
    ),
    Case("anchors-ts-1e30", anchors("events.jsonl", _event("1e30") + b"\n"), "events.jsonl", 1, "timestamp"),
    Case(
        "anchors-ts-1e400",
        anchors("events.jsonl", b"\n" + _event("1e400") + b"\n"),
        "events.jsonl",
        2,
        "timestamp",
    ),
    Case("anchors-deep-json", anchors("events.jsonl", DEEP + b"\n"), "events.jsonl", 1),
    Case(
        "anchors-csv-bad-utf8",
        anchors("events.csv", EVENTS_CSV + b"u2,1700000001,movies,watch,\xe9\n"),
        "events.csv",
        3,
    ),
    Case(
        "anchors-csv-ts-overflow",
        anchors("events.csv", EVENTS_CSV + b"u2,99999999999999999999999,movies,watch,X\n"),
        "events.csv",
        3,
        "timestamp",
    ),
    # The Parquet dataset cache
    Case("cache-truncated-parquet", cache(_truncate("items.parquet")), "items.parquet", None),
    Case(
        "cache-truncated-interactions", cache(_truncate("interactions.parquet")), "interactions.parquet", None
    ),
    Case("cache-truncated-json", cache(_cut_json), "dataset.json", 2),
    # Zip archives given to `recworld data fetch --from`
    Case("zip-unsupported-method", zipped(_method_99, zipfile.ZIP_STORED), "ml-100k.zip", None),
    Case("zip-corrupt-member", zipped(_corrupt_first_member), "ml-100k.zip", None),
    Case("zip-truncated", zipped(lambda b: b[: len(b) // 2]), "ml-100k.zip", None),
]

# These also run as a separate `recworld` process: what a user at a shell sees. Each costs a
# second of imports and repeats an in-process case, so `make test-fast` runs one of them (a
# truncated Parquet file, where a C++ reader could write to stderr itself) and the rest are
# marked slow.
IN_A_PROCESS = {
    "ml100k-ts-1e30",
    "ml1m-unknown-item",
    "amazon-gzip-truncated",
    "netflix-bad-utf8",
    "anchors-ts-1e30",
    "cache-truncated-parquet",
    "zip-unsupported-method",
}
IN_A_PROCESS_FAST = {"cache-truncated-parquet"}


def _check(case: Case, tmp: Path, code: int, err: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    assert err.startswith("recworld: error: ") and err.count("\n") == 1, err
    where = f"{case.file}:{case.line}:" if case.line is not None else f"{case.file}:"
    assert where in err, err
    if case.field is not None:
        assert f"field {case.field!r}" in err, err
    assert not (tmp / "out").exists()
    leftovers = [p.name for p in tmp.iterdir() if p.name.startswith(".")]
    assert leftovers == []
    home = paths.home()
    for kept in (home / "datasets", home / "cache" / "sources", home / "cache" / "raw"):
        assert not kept.exists() or not any(kept.iterdir()), list(kept.iterdir())


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_input_is_one_clear_error(case: Case, tmp_path: Path) -> None:
    argv = case.make(tmp_path)
    ran = run_recworld(*argv)
    code = ran.returncode
    _check(case, tmp_path, code, ran.stderr)


def _recworld() -> list[str]:
    script = Path(sys.executable).with_name("recworld")
    return [str(script)] if script.exists() else [sys.executable, "-m", "recworld.cli"]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c.id, marks=() if c.id in IN_A_PROCESS_FAST else pytest.mark.slow)
        for c in CASES
        if c.id in IN_A_PROCESS
    ],
)
def test_the_installed_command_exits_2_without_a_traceback(case: Case, tmp_path: Path) -> None:
    argv = case.make(tmp_path)
    done = subprocess.run(
        [*_recworld(), *argv], capture_output=True, text=True, timeout=120, env=dict(os.environ), check=False
    )
    _check(case, tmp_path, done.returncode, done.stderr)


def test_the_table_covers_every_format_forty_times_over() -> None:
    prefixes = {c.id.split("-")[0] for c in CASES}
    assert {
        "ml100k",
        "ml1m",
        "ml25m",
        "recbole",
        "amazon",
        "netflix",
        "lastfm",
        "meta",
        "anchors",
        "cache",
        "zip",
    } <= prefixes
    assert len(CASES) >= 40 and len({c.id for c in CASES}) == len(CASES)


# -- a byte-order mark is text's prefix, not an error --------------------------------------------


def _with_bom(*names: str) -> Callable[[Path], None]:
    def add(root: Path) -> None:
        for name in names:
            (root / name).write_bytes(BOM + (root / name).read_bytes())

    return add


BOM_CASES = [
    ("ml100k-u.data", write_ml100k, _with_bom("u.data", "u.item")),
    ("ml1m-ratings", write_ml1m, _with_bom("ratings.dat", "movies.dat")),
    ("ml25m-csv", write_ml25m, _with_bom("ratings.csv", "movies.csv", "links.csv")),
    ("recbole", write_recbole, _with_bom("tiny.inter", "tiny.item", "tiny.user")),
    ("netflix", write_netflix_world, _with_bom("combined_data_1.txt", "movie_titles.csv")),
    ("lastfm", write_lastfm_world, _with_bom("user_artists.dat", "artists.dat", "tags.dat")),
]


@pytest.mark.parametrize(("writer", "add_bom"), [c[1:] for c in BOM_CASES], ids=[c[0] for c in BOM_CASES])
def test_a_byte_order_mark_loads_like_the_plain_file(
    writer: Callable[[Path], Path], add_bom: Callable[[Path], None], tmp_path: Path
) -> None:
    plain = load_source(writer(tmp_path / "plain"))
    root = writer(tmp_path / "bom")
    add_bom(root)
    marked = load_source(root)
    assert marked.fingerprint() == plain.fingerprint()
    assert len(marked.interactions) == N_INTERACTIONS


def test_a_byte_order_mark_in_amazon_metadata_and_anchor_files(tmp_path: Path) -> None:
    root = write_amazon_world(tmp_path / "amazon")
    review = tmp_path / "amazon" / "Tiny_5.json.gz"
    review.write_bytes(gzip.compress(BOM + gzip.decompress(review.read_bytes())))
    assert len(load_source(root).interactions) == N_INTERACTIONS

    meta = tmp_path / "meta.csv"
    meta.write_bytes(BOM + b"item_id,cast\n1,Tom Hanks\n")
    movies = load_source(write_ml25m(tmp_path / "ml"), metadata=meta)
    assert movies.source["metadata"]["matched_items"] == 1

    events = tmp_path / "events.csv"
    events.write_bytes(BOM + EVENTS_CSV)
    (user,) = load_anchor_files(events)
    assert user.user_id == "u1" and user.records[0].timestamp == 1_700_000_000
    jsonl = tmp_path / "events.jsonl"
    jsonl.write_bytes(BOM + _event("1700000000") + b"\n")
    assert load_anchor_files(jsonl)[0].records[0].fields["title"] == "Heat"


def test_latin1_netflix_titles_are_read_as_published(tmp_path: Path) -> None:
    root = write_netflix_world(tmp_path / "netflix")
    _set_line(root / "movie_titles.csv", 1, "1,1991,Café Noir".encode("latin-1"))
    dataset = load_source(root)
    assert dataset.items.set_index("item_id").loc["1", "title"] == "Café Noir"


def test_a_good_zip_still_fetches(tmp_path: Path) -> None:
    argv = zipped(lambda b: b)(tmp_path)
    ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr
    assert json.loads((paths.datasets_dir() / "ml-100k" / "dataset.json").read_text())["name"] == "ml-100k"
