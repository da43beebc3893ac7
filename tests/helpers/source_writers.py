"""Fixture folders for the Amazon, Netflix and LastFM loaders, in the published formats.

Two kinds: copies of the hand-written quirk fixtures in ``fixtures/<source>/`` (gzipped
where the release is gzipped), and the shared tiny world of ``data_writers.RATINGS``
written in each format for the loader contract.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import shutil
from pathlib import Path

from helpers.data_writers import RATINGS

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "fixtures"


def gzip_file(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(dest, "wb") as out:
        out.write(src.read_bytes())
    return dest


def copy_amazon(root: Path, *, compress: bool = True) -> Path:
    """The Toys + Beauty quirk fixtures as ``X_5.json.gz`` / ``meta_X.json.gz`` (or plain)."""
    root.mkdir(parents=True, exist_ok=True)
    for src in sorted((FIXTURES / "amazon").glob("*.json")):
        if compress:
            gzip_file(src, root / f"{src.name}.gz")
        else:
            shutil.copy(src, root / src.name)
    return root


def copy_fixture(source: str, root: Path) -> Path:
    shutil.copytree(FIXTURES / source, root)
    return root


# -- the contract's tiny world in each format ----------------------------------------------------


def write_amazon_world(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    with gzip.open(root / "Tiny_5.json.gz", "wt", encoding="utf-8") as out:
        for user, item, rating, stamp in RATINGS:
            record = {"overall": rating, "reviewerID": str(user), "asin": str(item), "unixReviewTime": stamp}
            if item == 1:
                record["style"] = {"Color:": " Blue"}
            out.write(json.dumps(record) + "\n")
    with gzip.open(root / "meta_Tiny.json.gz", "wt", encoding="utf-8") as out:
        for item in range(1, 6):
            record = {
                "asin": str(item),
                "title": f"Product {item}",
                "brand": f"Brand {item % 2}",
                "category": ["Tiny", f"Sub {item % 2}", f"Leaf {item}"],
                "imageURLHighRes": [f"https://images.example/{item}.jpg"],
            }
            out.write((repr(record) if item == 3 else json.dumps(record)) + "\n")
    return root


def netflix_date(stamp: int) -> str:
    return dt.datetime.fromtimestamp(stamp, tz=dt.UTC).strftime("%Y-%m-%d")


def write_netflix_world(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    by_movie: dict[int, list[str]] = {}
    for user, item, rating, stamp in RATINGS:
        by_movie.setdefault(item, []).append(f"{user},{int(rating)},{netflix_date(stamp)}\n")
    text = "".join(f"{movie}:\n" + "".join(rows) for movie, rows in sorted(by_movie.items()))
    (root / "combined_data_1.txt").write_text(text, encoding="ascii")
    titles = "".join(f"{m},{1990 + m},Movie {m}, Part {m}\n" for m in range(1, 6))
    (root / "movie_titles.csv").write_bytes(titles.encode("latin-1"))
    return root


def write_lastfm_world(root: Path) -> Path:
    """RATINGS as listening weights (10 x rating); every pair tagged at its RATINGS time."""
    root.mkdir(parents=True, exist_ok=True)

    def tsv(name: str, header: list[str], rows: list[tuple[object, ...]], encoding: str = "utf-8") -> None:
        lines = ["\t".join(header)] + ["\t".join(str(v) for v in row) for row in rows]
        (root / name).write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))

    tsv("user_artists.dat", ["userID", "artistID", "weight"], [(u, i, int(r * 10)) for u, i, r, _ in RATINGS])
    tsv(
        "artists.dat",
        ["id", "name", "url", "pictureURL"],
        [
            (i, f"Artist {i}", f"http://www.last.fm/music/{i}", f"http://img.example/{i}.jpg")
            for i in range(1, 6)
        ],
    )
    tsv("tags.dat", ["tagID", "tagValue"], [(1, "rock"), (2, "seen live"), (3, "pop")], encoding="latin-1")
    tsv(
        "user_taggedartists-timestamps.dat",
        ["userID", "artistID", "tagID", "timestamp"],
        [(u, i, 1 if i % 2 else 3, t * 1000) for u, i, _, t in RATINGS],
    )
    return root
