"""Last.fm HetRec 2011 (hetrec2011-lastfm-2k) as a music dataset for the LastFM measures (§5.5).

Files, tab-separated with a header line, as published by GroupLens:

``user_artists.dat``                  ``userID artistID weight`` (weight = play count)
``artists.dat``                       ``id name url pictureURL``
``tags.dat``                          ``tagID tagValue`` (latin-1 in the release)
``user_taggedartists-timestamps.dat`` ``userID artistID tagID timestamp`` (milliseconds)

Interactions are the user-artist pairs of ``user_artists.dat``. The release has no
listening times, so each pair is dated by the user's first tag on that artist; pairs
the user never tagged come before the tagged ones, heaviest first, on synthetic
one-second steps (``docs/sources.md`` explains why). An artist's genre is its
dominant genre tag: the genre-vocabulary tag the most distinct users applied to it,
ties broken alphabetically.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection
from enum import StrEnum
from pathlib import Path

import numpy as np
import pandas as pd

from recworld.capped import DATASET_FILE_LIMIT, read_capped
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

FORMAT_NAME = "lastfm"
USER_ARTISTS = "user_artists.dat"
ARTISTS = "artists.dat"
TAGS = "tags.dat"
TAG_TIMES = "user_taggedartists-timestamps.dat"

INT, TEXT = ColumnKind.INT, ColumnKind.TEXT


class UntaggedOrder(StrEnum):
    """What to do with user-artist pairs that carry no tag (hence no time)."""

    WEIGHT = "weight"  # keep them, before the tagged pairs, heaviest first
    DROP = "drop"  # keep only pairs with a real tag time


# Words that name a style when they end a tag ("indie rock", "post-punk", "80s pop").
GENRE_WORDS = frozenset(
    """
    rock pop metal punk jazz blues folk country soul funk rap hip-hop hiphop electronic electronica
    electro techno house trance ambient reggae ska disco classical indie emo grunge hardcore
    industrial dance r&b rnb gospel opera soundtrack wave shoegaze noise experimental instrumental
    acoustic singer-songwriter latin salsa samba flamenco chanson schlager darkwave downtempo
    chillout lounge idm glitch minimal dub swing bebop fusion bluegrass americana rockabilly surf
    thrash doom sludge stoner goth gothic screamo alternative musical motown grime garage jungle
    breakbeat dnb trip-hop eurodance europop reggaeton dancehall bossa ebm synthwave chiptune crunk
    trap psychedelic psychedelia prog progressive symphonic baroque celtic medieval tango
    fado mpb kpop k-pop j-pop j-rock cpop
    """.split()  # noqa: SIM905 (a word list reads better than 110 quoted items)
)
# Whole tags that are genres but whose last word is not a style word.
GENRE_TERMS = frozenset(
    {
        "rock n roll",
        "rock and roll",
        "rock 'n' roll",
        "drum and bass",
        "drum n bass",
        "new age",
        "big band",
        "bossa nova",
        "visual kei",
        "world",
        "world music",
        "easy listening",
        "avant-garde",
        "lo-fi",
        "new romantic",
        "oldies",
    }
)
# One-word styles written as compounds ("synthpop", "metalcore", "dubstep", "krautrock").
_GENRE_SUFFIX = re.compile(r"(?:core|step|pop|rock|metal|punk|wave|hop|gaze|tronica|house|jazz)$")
_SPACE = re.compile(r"\s+")


def normalise_tag(value: str) -> str:
    """Lower-case, unescape, collapse blanks, and drop a trailing 'music' ('jazz music' -> 'jazz')."""
    text = _SPACE.sub(" ", html.unescape(str(value))).strip().lower()
    if text.endswith(" music") and text != "world music":
        text = text[: -len(" music")].strip()
    return text


def is_genre_tag(tag: str) -> bool:
    """True when a normalised tag names a musical style (see GENRE_WORDS / GENRE_TERMS)."""
    if not tag:
        return False
    if tag in GENRE_TERMS:
        return True
    last = tag.rsplit(" ", maxsplit=1)[-1]
    return (
        last in GENRE_WORDS
        or last.rsplit("-", maxsplit=1)[-1] in GENRE_WORDS
        or bool(_GENRE_SUFFIX.search(last))
    )


def dominant_genres(
    tagged: pd.DataFrame, tag_names: pd.Series, vocabulary: Collection[str] | None = None
) -> pd.Series:
    """``artist_id -> genre``: the vocabulary tag applied by the most distinct users; ties alphabetical.

    ``tagged`` has columns user_id, artist_id, tag_id; ``tag_names`` maps tag_id -> raw text.
    With ``vocabulary`` None a tag counts when :func:`is_genre_tag` accepts it.
    """
    names = tag_names.map(normalise_tag)
    allowed = {normalise_tag(v) for v in vocabulary} if vocabulary is not None else None
    keep = names[names.map(lambda t: t in allowed if allowed is not None else is_genre_tag(t))]
    frame = tagged.assign(genre=tagged["tag_id"].map(keep)).dropna(subset=["genre"])
    if frame.empty:
        return pd.Series(dtype=object)
    users = frame.drop_duplicates(["artist_id", "genre", "user_id"])
    counts = users.groupby(["artist_id", "genre"], sort=False).size().reset_index(name="users")
    counts = counts.sort_values(["artist_id", "users", "genre"], ascending=[True, False, True], kind="stable")
    best = counts.drop_duplicates("artist_id", keep="first")
    return pd.Series(best["genre"].to_numpy(dtype=object), index=best["artist_id"].to_numpy(dtype=object))


def order_interactions(
    listened: pd.DataFrame, tagged: pd.DataFrame, untagged: UntaggedOrder = UntaggedOrder.WEIGHT
) -> pd.DataFrame:
    """Date user-artist pairs: first tag time in seconds, else synthetic steps before the user's first.

    ``listened``: user_id, artist_id, weight. ``tagged``: user_id, artist_id, timestamp (ms).
    Returns user_id, item_id, timestamp (all pairs of ``listened``, or only tagged ones with DROP).
    """
    first = (tagged.groupby(["user_id", "artist_id"], sort=False)["timestamp"].min() // 1000).rename(
        "timestamp"
    )
    pairs = listened.merge(first.reset_index(), on=["user_id", "artist_id"], how="left")
    has_time = pairs["timestamp"].notna()
    if untagged is UntaggedOrder.DROP:
        pairs = pairs[has_time]
    elif (~has_time).any():
        global_start = int(pairs.loc[has_time, "timestamp"].min()) if has_time.any() else 0
        anchor = pairs.loc[has_time].groupby("user_id")["timestamp"].min()
        rest = pairs.loc[~has_time].sort_values(
            ["user_id", "weight", "artist_id"], ascending=[True, False, True], kind="stable"
        )
        size = rest.groupby("user_id")["artist_id"].transform("size").to_numpy()
        rank = rest.groupby("user_id").cumcount().to_numpy()
        start = rest["user_id"].map(anchor).fillna(global_start).to_numpy(dtype=np.int64)
        pairs.loc[rest.index, "timestamp"] = start - (size - rank)
    return pd.DataFrame(
        {
            "user_id": pairs["user_id"].astype(str).to_numpy(dtype=object),
            "item_id": pairs["artist_id"].astype(str).to_numpy(dtype=object),
            "timestamp": pairs["timestamp"].to_numpy(dtype=np.int64),
        }
    )


# -- files ---------------------------------------------------------------------------------------


def _encoding(path: Path) -> str:
    """UTF-8 when the whole file decodes as UTF-8, else latin-1 (as tags.dat ships)."""
    try:
        read_capped(path, limit=DATASET_FILE_LIMIT).decode("utf-8")
    except UnicodeDecodeError:
        return "latin-1"
    except OSError as exc:
        raise DataError(f"cannot read: {exc}", path=path) from exc
    return "utf-8"


def _spec(path: Path, columns: tuple[Column, ...]) -> TableSpec:
    if not path.is_file():
        raise DataError("file not found", path=path)
    return TableSpec(path, columns, sep="\t", encoding=_encoding(path), header=True)


def _read(path: Path, columns: tuple[Column, ...], key: str | None = None) -> pd.DataFrame:
    spec = _spec(path, columns)
    frame = read_table(spec)
    if key is not None:
        require_unique(frame, key, spec)
    return frame


def _id(name: str) -> Column:
    return Column(name, INT, low=0)


def load(path: Path, name: str | None = None) -> Dataset:
    return load_lastfm(path, name=name)


def _read_tags(root: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """tags.dat (tagID unique) and the tag times (ms), or empty frames when either is absent."""
    tag_path, times_path = root / TAGS, root / TAG_TIMES
    if not (tag_path.is_file() and times_path.is_file()):
        tags = pd.DataFrame({"tagID": pd.Series(dtype="int64"), "tagValue": pd.Series(dtype=str)})
        tagged = pd.DataFrame(
            {c: pd.Series(dtype="int64") for c in ("user_id", "artist_id", "tag_id", "timestamp")}
        )
        return tags, tagged
    tags = _read(tag_path, (_id("tagID"), Column("tagValue", required=False)), key="tagID")
    stamp = Column("timestamp", INT, low=MIN_TIMESTAMP * 1000, high=MAX_TIMESTAMP * 1000)
    tagged = _read(times_path, (_id("userID"), _id("artistID"), _id("tagID"), stamp))
    return tags, tagged.rename(columns={"userID": "user_id", "artistID": "artist_id", "tagID": "tag_id"})


def load_lastfm(
    path: Path,
    *,
    name: str | None = None,
    untagged: UntaggedOrder | str = UntaggedOrder.WEIGHT,
    genre_vocabulary: Collection[str] | None = None,
) -> Dataset:
    """Read a HetRec Last.fm folder into a music :class:`Dataset` (genres = [dominant genre])."""
    root = Path(path)
    order = UntaggedOrder(untagged)
    listened_spec = _spec(root / USER_ARTISTS, (_id("userID"), _id("artistID"), Column("weight", INT, low=0)))
    listened = read_table(listened_spec)
    dup = listened.duplicated(["userID", "artistID"]).to_numpy()
    if dup.any():
        row = int(dup.argmax())
        pair = listened.iloc[row]
        raise fail_at_row(listened_spec, row, f"user {pair['userID']} lists artist {pair['artistID']} twice")
    artists = _read(
        root / ARTISTS,
        (_id("id"), Column("name"), Column("url", required=False), Column("pictureURL", required=False)),
        key="id",
    )
    require_known(listened, "artistID", listened_spec, artists["id"], ARTISTS)
    listened = listened.rename(columns={"userID": "user_id", "artistID": "artist_id"})
    tags, tagged = _read_tags(root)
    interactions = order_interactions(listened, tagged, order)
    if interactions.empty:
        raise DataError("no user-artist pair has a tag time (untagged='drop')", path=root)
    genres = dominant_genres(
        tagged, pd.Series(tags["tagValue"].to_numpy(), index=tags["tagID"]), genre_vocabulary
    )
    items = pd.DataFrame(
        {
            "item_id": artists["id"].astype(str).to_numpy(dtype=object),
            "title": [html.unescape(n).strip() or None for n in artists["name"]],
            "image": artists["pictureURL"].replace("", None).to_numpy(dtype=object),
            "url": artists["url"].replace("", None).to_numpy(dtype=object),
        }
    )
    by_id = {str(k): v for k, v in genres.items()}
    items["genres"] = [[by_id[i]] if i in by_id else [] for i in items["item_id"]]
    return Dataset.from_frames(
        name=name or "lastfm",
        domain=Domain.MUSIC,
        interactions=interactions,
        items=items,
        source={
            "format": FORMAT_NAME,
            "path": str(root),
            "untagged": order.value,
            "tagged_pairs": len(listened.merge(tagged[["user_id", "artist_id"]].drop_duplicates())),
            "genre_vocabulary": "builtin" if genre_vocabulary is None else "custom",
        },
    )
