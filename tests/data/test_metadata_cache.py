"""Item-metadata joins and the content-hash cache of parsed sources."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from recworld.data import FORMATS, Dataset, load_source
from recworld.data.metadata import normalise_title
from recworld.errors import DataError


def _item(dataset: Dataset, item_id: str) -> dict[str, object]:
    return dict(dataset.items.loc[dataset.items["item_id"] == item_id].iloc[0])


def test_normalise_title() -> None:
    assert normalise_title("American President, The") == normalise_title("The American President")
    assert normalise_title("Café au Lait") == normalise_title("cafe au lait")


def test_csv_metadata_by_item_id(ml100k_dir: Path, tmp_path: Path) -> None:
    meta = tmp_path / "meta" / "movies.csv"
    meta.parent.mkdir()
    meta.write_text(
        "item_id,cast,director,logline,poster,genres\n"
        '1,"Tom Hanks|Tim Allen",John Lasseter,"Toys, alive.",posters/1.jpg,\n'
        "2,,,A café story.,https://example.org/2.jpg,Drama\n"
        "999,Nobody,,,,\n",
        encoding="utf-8",
    )
    dataset = load_source(ml100k_dir, metadata=meta)
    toy = _item(dataset, "1")
    assert toy["cast"] == ["Tom Hanks", "Tim Allen"]
    assert toy["director"] == ["John Lasseter"]
    assert toy["logline"] == "Toys, alive."
    assert toy["image"] == str((meta.parent / "posters" / "1.jpg").resolve())
    assert toy["genres"] == ["Animation", "Children's", "Comedy"]  # empty metadata cell keeps the source's
    cafe = _item(dataset, "2")
    assert cafe["image"] == "https://example.org/2.jpg" and cafe["genres"] == ["Drama"]
    assert _item(dataset, "3")["cast"] == []
    report = dataset.source["metadata"]
    assert (report["key"], report["rows"], report["matched_items"], report["unmatched_rows"]) == (
        "item_id",
        3,
        2,
        1,
    )
    assert {"cast", "director", "logline", "image"} <= set(dataset.item_fields)


def test_jsonl_metadata_by_title_and_year(ml25m_dir: Path, tmp_path: Path) -> None:
    meta = tmp_path / "meta.jsonl"
    rows = [
        {"title": "The American President", "year": 1995, "director": ["Rob Reiner"]},
        {"title": "Toy Story", "year": 1999, "director": ["wrong year"]},
        {"title": "Title Without Year", "logline": "No year needed when unique."},
    ]
    meta.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    # No item_id column and ml-25m's imdb_id absent from the file: match by title (+ year).
    dataset = load_source(ml25m_dir, metadata=meta)
    assert _item(dataset, "3")["director"] == ["Rob Reiner"]
    assert _item(dataset, "1")["director"] == []
    assert _item(dataset, "5")["logline"] == "No year needed when unique."
    assert dataset.source["metadata"]["matched_items"] == 2


def test_metadata_by_imdb_id(ml25m_dir: Path, tmp_path: Path) -> None:
    meta = tmp_path / "meta.jsonl"
    meta.write_text(
        json.dumps({"imdb_id": "tt0114709", "cast": "Tom Hanks|Tim Allen"}) + "\n", encoding="utf-8"
    )
    dataset = load_source(ml25m_dir, metadata=meta)
    assert _item(dataset, "1")["cast"] == ["Tom Hanks", "Tim Allen"]
    assert dataset.source["metadata"]["key"] == "imdb_id"


@pytest.mark.parametrize(
    ("name", "text", "line", "words"),
    [
        ("m.jsonl", '{"item_id": "1"}\n{"item_id": \n', 2, "invalid JSON"),
        ("m.jsonl", '{"item_id": "1"}\n{"item_id": "1"}\n', 2, "duplicate item_id"),
        ("m.jsonl", '{"item_id": "1", "cast": [1, 2]}\n', 1, "list of strings"),
        ("m.csv", "item_id,cast\n1,a\n2,b,c\n", 3, "expected 2"),
        ("m.csv", "cast,logline\na,b\n", 1, "no column to match"),
    ],
)
def test_bad_metadata(ml100k_dir: Path, tmp_path: Path, name: str, text: str, line: int, words: str) -> None:
    meta = tmp_path / name
    meta.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=words) as info:
        load_source(ml100k_dir, metadata=meta)
    assert info.value.line == line and info.value.path == meta


def test_second_load_reads_the_cache(ml25m_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_source(ml25m_dir)

    def explode(root: Path, name: str) -> Dataset:
        raise AssertionError("parsed again")

    monkeypatch.setitem(FORMATS, "ml-25m", dataclasses.replace(FORMATS["ml-25m"], loader=explode))
    second = load_source(ml25m_dir, name="other-name")
    assert second.fingerprint() == first.fingerprint()
    assert second.name == "other-name"
    # Changing one byte of an input changes the key, so it is parsed again.
    ratings = ml25m_dir / "ratings.csv"
    ratings.write_text(ratings.read_text().replace("881250950", "881250951"))
    with pytest.raises(AssertionError, match="parsed again"):
        load_source(ml25m_dir)
