"""Every zip member layout is read or refused in one line, and a failed unpack leaves nothing (issue 23, 3).

Hypothesis draws archives: member paths from parts a format reads and parts
that break unpacking (``..``, a 300-byte name, a file where another member
needs a folder, backslashes, absolute paths, folder entries), contents that are
valid tables, garbage or a zeros bomb, four compression methods, and symlink
flags. The checker lists ``RECWORLD_HOME`` with ``os`` alone: after a refusal
nothing is left there, and after success only what the zip's wanted members
hold, no larger than the ratio cap allows.
"""

from __future__ import annotations

import csv
import io
import os
import stat
import tempfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recworld.data import sources, zips
from recworld.errors import DataError

RAN = {"zip-layouts": 0}


def _table(header: list[str], rows: list[list[object]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


GOOD = {
    "ratings.csv": _table(
        ["userId", "movieId", "rating", "timestamp"],
        [[u, m, 4.0, 1000 + u * 10 + m] for u in range(1, 8) for m in range(1, 6)],
    ),
    "movies.csv": _table(
        ["movieId", "title", "genres"], [[m, f"Movie {m} (1999)", "Drama"] for m in range(1, 6)]
    ),
    "links.csv": _table(["movieId", "imdbId", "tmdbId"], [[m, 100 + m, m] for m in range(1, 6)]),
}
PARTS = st.sampled_from(
    [
        "ml-latest-small",
        "ratings.csv",
        "movies.csv",
        "links.csv",
        "..",
        ".",
        "x" * 300,
        "a\\b",
        "zeros.bin",
        "d",
    ]
)
NAMES = st.one_of(
    st.lists(PARTS, min_size=1, max_size=3).map("/".join),
    st.sampled_from(["/etc/ratings.csv", "ml-latest-small/", "ratings.csv/", "ml-latest-small//ratings.csv"]),
)
CONTENT = st.sampled_from(["good", "garbage", "bomb", "empty"])
METHOD = st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])


def _content(kind: str, name: str) -> bytes:
    if kind == "good":
        return GOOD.get(name.rsplit("/", 1)[-1], b"a,b\n1,2\n")
    if kind == "garbage":
        return b"\x00\xff" * 50 + b"\n,,,\n"
    if kind == "bomb":
        return b"userId,movieId,rating,timestamp\n" + b"0" * (3 << 20)
    return b""


def _entries(home: Path) -> list[tuple[str, int]]:
    found = []
    for folder, _dirs, files in os.walk(home):
        for name in files:
            path = os.path.join(folder, name)
            found.append((os.path.relpath(path, home), os.lstat(path).st_size))
    return sorted(found)


@pytest.mark.filterwarnings("ignore:Duplicate name")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    members=st.lists(st.tuples(NAMES, CONTENT, METHOD, st.booleans()), min_size=1, max_size=6),
    complete=st.booleans(),
)
def test_every_member_layout_is_read_or_refused_in_one_line_and_a_refusal_leaves_nothing(
    members: list[tuple[str, str, int, bool]], complete: bool
) -> None:
    RAN["zip-layouts"] += 1
    with tempfile.TemporaryDirectory(prefix="rw-zip-") as scratch:
        root = Path(scratch)
        home = root / "home"
        old = os.environ.get("RECWORLD_HOME")
        os.environ["RECWORLD_HOME"] = str(home)
        try:
            archive = root / "drawn.zip"
            with zipfile.ZipFile(archive, "w") as zf:
                if complete:  # a whole dataset too, so some draws get past the layout to the parser
                    for name, data in GOOD.items():
                        zf.writestr(f"ml-latest-small/{name}", data, zipfile.ZIP_DEFLATED)
                for name, kind, method, link in members:
                    info = zipfile.ZipInfo(name)
                    info.compress_type = method
                    if link:
                        info.external_attr = (stat.S_IFLNK | 0o777) << 16
                    zf.writestr(info, _content(kind, name))
            try:
                sources.load_source(archive)
            except DataError as exc:
                assert "\n" not in str(exc) and "drawn.zip" in str(exc), str(exc)
                raw = home / "cache" / "raw"
                assert not raw.exists() or os.listdir(raw) == [], _entries(home)
                assert [e for e in _entries(home) if not e[0].startswith("keys")] == []
            else:
                total = sum(size for relative, size in _entries(home / "cache" / "raw"))
                assert total <= sum(len(GOOD[n]) for n in GOOD) + len(members) * ((3 << 20) + 100)
                for relative, size in _entries(home / "cache" / "raw"):
                    assert zips.wanted(relative.split(os.sep, 1)[1]), relative
                    assert size < (4 << 20)
        finally:
            if old is None:
                os.environ.pop("RECWORLD_HOME", None)
            else:
                os.environ["RECWORLD_HOME"] = old


def test_zz_report_examples_run() -> None:
    print("examples run:", RAN)
