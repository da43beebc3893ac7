"""The one table of published source formats, and detection from the files a folder holds.

To add a format (Amazon, Netflix, LastFM), write ``load_x(root, name) -> Dataset``
in its own module and add one :class:`SourceFormat` row to :data:`FORMATS`:
the globs it needs, the globs it may use, and the loader. Detection, ``--format``,
the content-hash cache and ``recworld data formats`` all read this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from recworld.data import amazon, lastfm, llara, movielens, netflix, recbole
from recworld.data.dataset import Dataset
from recworld.errors import ConfigError, DataError

Loader = Callable[[Path, str], Dataset]


@dataclass(frozen=True)
class SourceFormat:
    """One published file layout: which files make it up and how to load them."""

    name: str
    description: str
    required: tuple[str, ...]  # globs that must all match a file in the folder
    optional: tuple[str, ...]  # globs of further files the loader reads when present
    loader: Loader
    aliases: tuple[str, ...] = ()
    tables: bool = False  # every file is a delimited table read under TABLE_LINE_LIMIT (_tables.read_table)

    def detect(self, path: Path) -> bool:
        """True when ``path`` is a folder holding every required file."""
        return path.is_dir() and all(_matches(path, pattern) for pattern in self.required)

    def files(self, path: Path) -> list[Path]:
        """The files of this format in ``path`` (what the cache key hashes and fetch keeps)."""
        found: set[Path] = set()
        for pattern in (*self.required, *self.optional):
            found.update(p for p in path.glob(pattern) if p.is_file())
        return sorted(found)

    def load(self, path: Path, name: str) -> Dataset:
        """Parse the folder into a canonical dataset named ``name``."""
        return self.loader(path, name)


def _matches(path: Path, pattern: str) -> bool:
    return any(p.is_file() for p in path.glob(pattern))


FORMATS: dict[str, SourceFormat] = {
    fmt.name: fmt
    for fmt in (
        SourceFormat(
            "ml-100k",
            "GroupLens MovieLens-100K: u.data, u.item, u.user, u.genre",
            required=("u.data", "u.item"),
            optional=("u.user", "u.genre"),
            loader=movielens.load_ml100k,
            tables=True,
        ),
        SourceFormat(
            "recbole",
            "RecBole atomic files: NAME.inter, NAME.item, NAME.user (as in the recbole wheel)",
            required=("*.inter",),
            optional=("*.item", "*.user"),
            loader=recbole.load_recbole,
            tables=True,
        ),
        SourceFormat(
            "ml-1m",
            "GroupLens MovieLens-1M: ratings.dat, movies.dat, users.dat",
            required=("ratings.dat", "movies.dat"),
            optional=("users.dat",),
            loader=movielens.load_ml1m,
            tables=True,
        ),
        SourceFormat(
            "ml-25m",
            "GroupLens MovieLens-25M / ml-latest / ml-latest-small: ratings.csv, movies.csv, links.csv",
            required=("ratings.csv", "movies.csv"),
            optional=("links.csv",),
            loader=movielens.load_ml25m,
            aliases=("ml-latest", "ml-latest-small", "ml-20m"),
            tables=True,
        ),
        SourceFormat(
            "amazon",
            "Amazon Reviews 2018 5-core: one or more <Category>_5.json.gz + meta_<Category>.json.gz",
            required=("*_5.json*",),
            optional=("meta_*.json*",),
            loader=amazon.load,
        ),
        SourceFormat(
            "netflix",
            "Netflix Prize: combined_data_*.txt or training_set/mv_*.txt, plus movie_titles.csv (latin-1)",
            required=("movie_titles.*",),
            optional=("combined_data_*.txt", "training_set/mv_*.txt", "mv_*.txt"),
            loader=netflix.load,
        ),
        SourceFormat(
            "lastfm",
            "Last.fm HetRec 2011: user_artists.dat, artists.dat, tags.dat, user_taggedartists-timestamps.dat",
            required=("user_artists.dat", "artists.dat"),
            optional=("tags.dat", "user_taggedartists-timestamps.dat"),
            loader=lastfm.load,
        ),
        SourceFormat(
            llara.LLARA_FORMAT,
            "LLaRA-style LastFM test sequences: llara_sequences.jsonl or .csv (see recworld.data.llara)",
            required=("llara_sequences.*",),
            optional=(),
            loader=llara.load_llara,
        ),
    )
}


def get_format(name: str) -> SourceFormat:
    """The format called ``name`` (or one of its aliases)."""
    for fmt in FORMATS.values():
        if name == fmt.name or name in fmt.aliases:
            return fmt
    known = sorted(n for f in FORMATS.values() for n in (f.name, *f.aliases))
    raise ConfigError(f"unknown format {name!r}; known formats: {', '.join(known)}")


def detect_format(path: Path) -> SourceFormat:
    """The one format whose required files are all in ``path``."""
    found = [fmt for fmt in FORMATS.values() if fmt.detect(path)]
    if len(found) == 1:
        return found[0]
    if found:
        names = ", ".join(f.name for f in found)
        raise ConfigError(f"{path}: the files fit several formats ({names}); choose one with --format")
    expected = "; ".join(f"{f.name}: {' + '.join(f.required)}" for f in FORMATS.values())
    raise DataError(f"no known dataset format here (expected {expected})", path=path)


def find_source_root(path: Path) -> Path:
    """The folder holding the files: ``path`` itself, or its only matching sub-folder.

    Official zips unpack into a folder of the same name (``ml-100k/u.data``), so
    pointing at the folder the zip was extracted into also works.
    """
    if path.is_file():
        path = path.parent
    if any(fmt.detect(path) for fmt in FORMATS.values()):
        return path
    children = [
        c for c in sorted(path.iterdir()) if c.is_dir() and any(f.detect(c) for f in FORMATS.values())
    ]
    if len(children) == 1:
        return children[0]
    return path
