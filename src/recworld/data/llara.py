"""LLaRA-style LastFM test sequences (paper §5.5) from a documented JSONL or CSV file; no pickle.

LLaRA ships its test set as pickled pandas frames. Convert it once (outside
RecWorld) into one of these two layouts, in a folder, and build from the folder:

``llara_sequences.jsonl``: one object per sequence::

    {"seq_id": "17",
     "history": [{"id": "289", "name": "Britney Spears"}, ...],   # oldest first, up to 10
     "next": {"id": "72", "name": "Depeche Mode"},
     "candidates": [{"id": "72", "name": "Depeche Mode"}, ...]}   # optional: 20, with the next

``llara_sequences.csv``: one row per artist of a sequence, with the header
``seq_id,role,position,artist_id,artist_name`` and an optional ``genre``
column; ``role`` is ``history``, ``next`` or ``candidate``; ``position``
orders the history (oldest first) and the candidates.

An artist object (or row) may carry ``genres`` (a list or one string; CSV:
``genre``), e.g. from HetRec 2011, for ``lastfm_artist_genre``. Each sequence
becomes one user whose interactions are its history then its next artist, on
one-second steps, so the build asks about its last item only; given candidates
are used as that question's options instead of drawn ones.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from recworld.capped import DATASET_FILE_LIMIT, read_capped
from recworld.data.dataset import Dataset, Domain
from recworld.errors import DataError
from recworld.io import iter_json_lines

LLARA_FORMAT = "llara-lastfm"
JSONL_NAME = "llara_sequences.jsonl"
CSV_NAME = "llara_sequences.csv"
# The users-table column holding a sequence's given candidates (a JSON array of item ids).
CANDIDATES_COLUMN = "candidates"
CSV_COLUMNS = ("seq_id", "role", "position", "artist_id", "artist_name")
ROLES = ("history", "next", "candidate")


@dataclass
class _Sequence:
    seq_id: str
    history: list[str] = field(default_factory=list)
    next: str | None = None
    candidates: list[str] = field(default_factory=list)


def parse_candidates(value: Any) -> list[str]:
    """The item ids stored in :data:`CANDIDATES_COLUMN` (a list; JSON text from older caches)."""
    if isinstance(value, str):
        value = json.loads(value)
    return [str(v) for v in value]


class _Artists:
    """Every artist met in the file: one name (and genres) per id, a second spelling refused."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: dict[str, str] = {}
        self.genres: dict[str, list[str]] = {}

    def add(self, artist_id: str, name: str, genres: Any, line: int) -> str:
        if not artist_id:
            raise DataError("an artist has no id", path=self.path, line=line)
        name = name.strip() or artist_id
        known = self.names.setdefault(artist_id, name)
        if known != name:
            raise DataError(f"artist {artist_id} is named {known!r} and {name!r}", path=self.path, line=line)
        values = [genres] if isinstance(genres, str) else list(genres or [])
        if values:
            self.genres[artist_id] = [str(g) for g in values if str(g)]
        return artist_id


def _artist(obj: Any, artists: _Artists, line: int, where: str) -> str:
    if not isinstance(obj, dict) or "id" not in obj:
        raise DataError(f"{where}: expected an object with 'id' and 'name'", path=artists.path, line=line)
    return artists.add(str(obj["id"]), str(obj.get("name") or ""), obj.get("genres"), line)


def _read_jsonl(path: Path, artists: _Artists) -> Iterator[tuple[int, _Sequence]]:
    for line, row in iter_json_lines(path):
        history = row.get("history")
        if "seq_id" not in row or not isinstance(history, list) or "next" not in row:
            raise DataError("a sequence needs 'seq_id', 'history' (a list) and 'next'", path=path, line=line)
        seq = _Sequence(str(row["seq_id"]))
        seq.history = [_artist(a, artists, line, "history") for a in history]
        seq.next = _artist(row["next"], artists, line, "next")
        seq.candidates = [_artist(a, artists, line, "candidates") for a in row.get("candidates") or []]
        yield line, seq


def _read_csv(path: Path, artists: _Artists) -> Iterator[tuple[int, _Sequence]]:
    try:
        text = read_capped(path, limit=DATASET_FILE_LIMIT).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read: {exc}", path=path) from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(f"the header lacks {', '.join(missing)}", path=path, line=1)
    rows: dict[str, list[tuple[int, int, dict[str, str]]]] = {}
    for line, row in enumerate(reader, start=2):
        if row["role"] not in ROLES:
            raise DataError(f"role {row['role']!r} is not one of {', '.join(ROLES)}", path=path, line=line)
        try:
            position = int(row["position"] or 0)
        except ValueError:
            raise DataError(f"position {row['position']!r} is not an integer", path=path, line=line) from None
        rows.setdefault(row["seq_id"], []).append((position, line, row))
    for seq_id, members in rows.items():
        seq = _Sequence(seq_id)
        for _, line, row in sorted(members, key=lambda m: (m[0], m[1])):
            artist = artists.add(row["artist_id"], row["artist_name"] or "", row.get("genre") or None, line)
            if row["role"] == "history":
                seq.history.append(artist)
            elif row["role"] == "candidate":
                seq.candidates.append(artist)
            elif seq.next is not None:
                raise DataError(f"sequence {seq_id} has two next artists", path=path, line=line)
            else:
                seq.next = artist
        yield members[0][1], seq


def _check(seq: _Sequence, path: Path, line: int) -> None:
    if seq.next is None or not seq.history:
        raise DataError(f"sequence {seq.seq_id} needs a history and a next artist", path=path, line=line)
    if seq.candidates:
        if seq.next not in seq.candidates:
            raise DataError(
                f"sequence {seq.seq_id}: the next artist is not a candidate", path=path, line=line
            )
        if len(set(seq.candidates)) != len(seq.candidates):
            raise DataError(f"sequence {seq.seq_id} lists a candidate twice", path=path, line=line)


def load_llara(path: Path, name: str | None = None) -> Dataset:
    """Read ``llara_sequences.jsonl`` (or ``.csv``) in ``path`` into a music :class:`Dataset`."""
    root = Path(path)
    file = root / JSONL_NAME if (root / JSONL_NAME).is_file() else root / CSV_NAME
    if not file.is_file():
        raise DataError(f"neither {JSONL_NAME} nor {CSV_NAME} found", path=root)
    artists = _Artists(file)
    reader = _read_jsonl if file.suffix == ".jsonl" else _read_csv
    interactions: list[tuple[str, str, int]] = []
    users: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    for line, seq in reader(file, artists):
        _check(seq, file, line)
        if seq.seq_id in seen:
            raise DataError(f"sequence id {seq.seq_id!r} appears twice", path=file, line=line)
        seen.add(seq.seq_id)
        steps = [*seq.history, str(seq.next)]
        interactions += [(seq.seq_id, artist, t) for t, artist in enumerate(steps)]
        users.append((seq.seq_id, json.dumps(seq.candidates) if seq.candidates else None))
    if not users:
        raise DataError("no sequence in the file", path=file)
    ids = sorted(artists.names)
    items = pd.DataFrame(
        {
            "item_id": ids,
            "title": [artists.names[i] for i in ids],
            "genres": [artists.genres.get(i, []) for i in ids],
        }
    )
    return Dataset.from_frames(
        name=name or "lastfm-llara",
        domain=Domain.MUSIC,
        interactions=pd.DataFrame(interactions, columns=["user_id", "item_id", "timestamp"]),
        items=items,
        users=pd.DataFrame(users, columns=["user_id", CANDIDATES_COLUMN]),
        source={"format": LLARA_FORMAT, "path": str(file), "sequences": len(users)},
    )
