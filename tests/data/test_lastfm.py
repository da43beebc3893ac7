"""Last.fm HetRec 2011 loader: ordering rule, dominant genre, encodings, and bad input."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from helpers.source_writers import copy_fixture
from recworld.data import FORMATS, Dataset, Domain
from recworld.data.lastfm import dominant_genres, is_genre_tag, load_lastfm, normalise_tag, order_interactions
from recworld.errors import DataError


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return copy_fixture("lastfm", tmp_path / "hetrec2011-lastfm-2k")


@pytest.fixture
def dataset(folder: Path) -> Dataset:
    return load_lastfm(folder)


def history(ds: Dataset, user: str) -> list[tuple[str, int]]:
    rows = ds.interactions[ds.interactions["user_id"] == user]
    return list(zip(rows["item_id"], rows["timestamp"], strict=True))


def test_pairs_dated_by_first_tag_and_untagged_pairs_first_by_weight(dataset: Dataset) -> None:
    assert dataset.domain is Domain.MUSIC
    # user 2: 53 tagged 1233442800, 51 at 1238536800, 52 first of two tags 1241128800; 54 untagged.
    assert history(dataset, "2") == [
        ("54", 1233442799),
        ("53", 1233442800),
        ("51", 1238536800),
        ("52", 1241128800),
    ]
    # user 3: 55 untagged (3 tagged 52 and 54 but never listened to them: no interaction).
    assert history(dataset, "3") == [("55", 1220219999), ("51", 1220220000)]
    # user 4 has no tag on a listened artist: placed before the earliest real time of the dataset.
    assert history(dataset, "4") == [("52", 1220219999)]
    assert dataset.interactions["rating"].isna().all()
    assert dataset.source["tagged_pairs"] == 4


def test_untagged_order_is_heaviest_first() -> None:
    listened = pd.DataFrame({"user_id": [1, 1, 1, 1], "artist_id": [10, 11, 12, 13], "weight": [5, 50, 5, 7]})
    tagged = pd.DataFrame({"user_id": [1], "artist_id": [13], "tag_id": [1], "timestamp": [9_000_500]})
    out = order_interactions(listened, tagged).sort_values("timestamp")
    assert list(out["item_id"]) == ["11", "10", "12", "13"]  # 50, then the 5-5 tie by id, then tagged
    assert list(out["timestamp"]) == [8997, 8998, 8999, 9000]


def test_drop_keeps_only_tagged_pairs(folder: Path) -> None:
    ds = load_lastfm(folder, untagged="drop")
    assert set(zip(ds.interactions["user_id"], ds.interactions["item_id"], strict=True)) == {
        ("2", "51"),
        ("2", "52"),
        ("2", "53"),
        ("3", "51"),
    }


def test_dominant_genre_rule(dataset: Dataset) -> None:
    genres = dataset.items.set_index("item_id")["genres"].to_dict()
    assert genres["51"] == ["new wave"]  # 2 users; "seen live" (3 users) is not a genre; synthpop 1
    assert genres["52"] == ["chillout"]  # trip-hop 1 user (tagged twice) ties chillout 1: alphabetical
    assert genres["53"] == []  # only "seen live"
    assert genres["54"] == ["électro-pop"]  # latin-1 tags.dat decoded
    assert genres["55"] == []


def test_dominant_genres_matches_brute_force() -> None:
    tagged = pd.DataFrame(
        {
            "user_id": [1, 2, 3, 1, 1, 2, 3, 4, 4],
            "artist_id": [7, 7, 7, 7, 8, 8, 8, 8, 8],
            "tag_id": [1, 1, 1, 2, 3, 3, 1, 1, 4],
        }
    )
    names = pd.Series({1: "Rock", 2: "pop", 3: "jazz", 4: "seen live"})
    got = dominant_genres(tagged, names).to_dict()
    want = {}
    for artist, group in tagged.groupby("artist_id"):
        counts = {}
        for tag, users in group.groupby("tag_id")["user_id"]:
            if is_genre_tag(normalise_tag(names[tag])):
                counts[normalise_tag(names[tag])] = users.nunique()
        best = max(counts.values())
        want[artist] = min(t for t, n in counts.items() if n == best)
    assert got == want == {7: "rock", 8: "jazz"}
    assert dominant_genres(tagged, names, vocabulary=["seen live"]).to_dict() == {8: "seen live"}


def test_genre_vocabulary() -> None:
    for tag in (
        "rock",
        "indie rock",
        "post-punk",
        "synthpop",
        "metalcore",
        "hip-hop",
        "drum and bass",
        "80s pop",
    ):
        assert is_genre_tag(normalise_tag(tag)), tag
    for tag in ("seen live", "female vocalists", "favorites", "awesome", "80s", "british", ""):
        assert not is_genre_tag(normalise_tag(tag)), tag
    assert normalise_tag("  Jazz   Music ") == "jazz"


def test_artist_items(dataset: Dataset) -> None:
    items = dataset.items.set_index("item_id")
    assert items.loc["55", "title"] == "Björk"
    assert items.loc["51", "image"] == "http://userserve-ak.last.fm/serve/252/155668.jpg"
    assert items.loc["53", "image"] is None


def test_missing_tag_files_still_load(folder: Path) -> None:
    (folder / "tags.dat").unlink()
    ds = load_lastfm(folder)
    assert not ds.has_item_field("genres")
    assert len(ds.interactions) == 7


def test_bad_row_names_file_and_line(folder: Path) -> None:
    path = folder / "user_artists.dat"
    path.write_bytes(path.read_bytes() + b"5\tx\t10\r\n")
    with pytest.raises(DataError) as info:
        load_lastfm(folder)
    assert (info.value.path, info.value.line, info.value.field) == (path, 9, "artistID")


def test_duplicate_pair_and_missing_file(folder: Path) -> None:
    path = folder / "user_artists.dat"
    good = path.read_bytes()
    path.write_bytes(good + b"2\t51\t1\r\n")
    with pytest.raises(DataError, match="twice") as info:
        load_lastfm(folder)
    assert info.value.line == 9
    path.write_bytes(good)
    (folder / "artists.dat").unlink()
    assert not FORMATS["lastfm"].detect(folder)
    with pytest.raises(DataError, match="not found"):
        load_lastfm(folder)


# -- LLaRA-style test sequences (recworld.data.llara) ------------------------------------------------


def _llara_rows() -> list[dict[str, object]]:
    def a(i: int, name: str) -> dict[str, object]:
        return {"id": str(i), "name": name, "genres": ["rock"] if i % 2 else ["pop"]}

    return [
        {"seq_id": "7", "history": [a(3, "Muse"), a(1, "Abba")], "next": a(2, "Blur"),
         "candidates": [a(2, "Blur"), a(4, "Oasis")]},
        {"seq_id": "8", "history": [a(4, "Oasis")], "next": a(1, "Abba")},
    ]  # fmt: skip


def _write_csv(folder: Path, rows: list[dict[str, object]]) -> None:
    lines = ["seq_id,role,position,artist_id,artist_name,genre"]
    for row in rows:
        members = [("history", i, x) for i, x in enumerate(row["history"])]  # type: ignore[arg-type]
        members += [("next", 0, row["next"])]
        members += [("candidate", i, x) for i, x in enumerate(row.get("candidates", []))]  # type: ignore[arg-type]
        for role, pos, artist in reversed(members):  # row order must not matter, only position
            lines.append(
                f"{row['seq_id']},{role},{pos},{artist['id']},{artist['name']},{artist['genres'][0]}"
            )
    (folder / "llara_sequences.csv").write_text("\n".join(lines) + "\n")


def test_llara_jsonl_and_csv_give_one_dataset(tmp_path: Path) -> None:
    import json

    from recworld.data.llara import load_llara, parse_candidates

    (tmp_path / "j").mkdir()
    (tmp_path / "c").mkdir()
    rows = _llara_rows()
    (tmp_path / "j" / "llara_sequences.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _write_csv(tmp_path / "c", rows)
    from_jsonl, from_csv = load_llara(tmp_path / "j"), load_llara(tmp_path / "c")
    assert from_jsonl.fingerprint() == from_csv.fingerprint()
    assert from_jsonl.domain is Domain.MUSIC
    seq7 = from_jsonl.interactions[from_jsonl.interactions["user_id"] == "7"]
    assert list(seq7["item_id"]) == ["3", "1", "2"]  # history oldest first, then the next artist
    users = from_jsonl.users.set_index("user_id")["candidates"]
    assert parse_candidates(users["7"]) == ["2", "4"] and not isinstance(users["8"], str)
    titles = dict(zip(from_jsonl.items["item_id"], from_jsonl.items["title"], strict=True))
    assert titles == {"1": "Abba", "2": "Blur", "3": "Muse", "4": "Oasis"}
    assert "llara-lastfm" in FORMATS


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"seq_id": "1", "history": [], "next": {"id": "2", "name": "B"}}, "needs a history"),
        ({"seq_id": "1", "history": [{"id": "1", "name": "A"}], "next": {"id": "2", "name": "B"},
          "candidates": [{"id": "3", "name": "C"}]}, "not a candidate"),
        ({"seq_id": "1", "history": [{"id": "1", "name": "A"}], "next": {"id": "1", "name": "Z"}}, "named"),
    ],
)  # fmt: skip
def test_llara_bad_sequences_name_file_and_line(tmp_path: Path, row: dict[str, object], message: str) -> None:
    import json

    from recworld.data.llara import load_llara

    (tmp_path / "llara_sequences.jsonl").write_text("\n" + json.dumps(row) + "\n")
    with pytest.raises(DataError, match=message) as err:
        load_llara(tmp_path)
    assert ":2" in str(err.value)
