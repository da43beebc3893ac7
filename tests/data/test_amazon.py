"""Amazon Reviews 2018 loader: the published quirks, cleaning rules, and bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from helpers.source_writers import FIXTURES, copy_amazon
from recworld.data import FORMATS, Dataset, Domain, amazon_reviews
from recworld.data.amazon import (
    clean_brand,
    clean_categories,
    clean_text,
    clean_title,
    item_colors,
    load_amazon,
)
from recworld.errors import DataError


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return copy_amazon(tmp_path / "amazon")


@pytest.fixture
def dataset(folder: Path) -> Dataset:
    return load_amazon(folder, name="amz")


def item(ds: Dataset, asin: str) -> pd.Series:
    return ds.items.set_index("item_id").loc[asin]


def test_cleaning_rules_on_single_values() -> None:
    assert clean_text("LEGO &amp;amp; <b>Bricks</b>\n  Set") == "LEGO & Bricks Set"
    assert clean_text("  ") is None
    assert clean_title("var aPageStart = (new Date()).getTime();") is None
    assert clean_title(".a-box { display: block; }") is None
    assert clean_title("Puzzle {1000 pieces}") == "Puzzle {1000 pieces}"
    for placeholder in ("Unknown", "N/A", "NA", "Generic", "  ", "none", "n.a.", "by Unknown"):
        assert clean_brand(placeholder) is None, placeholder
    assert clean_brand("by\n    \n    LEGO") == "LEGO"
    assert clean_brand("Visit Amazon's Nike Page") == "Nike"
    assert clean_brand("Ben &amp; Jerry&#39;s") == "Ben & Jerry's"
    assert clean_categories(["A &amp; B", "", "<div>", "</span></span>", "x" * 61, "Leaf", "Leaf"]) == [
        "A & B",
        "Leaf",
    ]
    # 2014-style records: a list of paths, the first one is used.
    assert clean_categories([["Toys", "Dolls"], ["Toys", "Puzzles"]]) == ["Toys", "Dolls"]
    assert clean_categories("Toys") == []


def test_loads_both_categories_with_asins_as_ids(dataset: Dataset) -> None:
    assert dataset.domain is Domain.PRODUCT
    assert set(dataset.items["item_id"]) == {"B001", "B002", "B003", "B004", "B101"}
    assert "B999" not in set(dataset.items["item_id"])  # catalogue entries nobody reviewed are dropped
    cats = dataset.items.set_index("item_id")["amazon_category"].to_dict()
    # B001 is reviewed in both files; files are read in name order, so Beauty claims it first.
    assert cats == {"B001": "Beauty", "B002": "Toys", "B003": "Toys", "B004": "Toys", "B101": "Beauty"}
    assert dataset.source["categories"] == ["Beauty", "Toys"]


def test_exact_duplicate_reviews_count_once(dataset: Dataset) -> None:
    inter = dataset.interactions
    a2 = inter[inter["user_id"] == "A2"]
    assert list(a2["item_id"]) == ["B002", "B001"]  # time order, duplicate (A2, B001, 150) dropped
    assert dataset.source["duplicate_reviews_dropped"] == 1
    assert len(inter) == 12


def test_metadata_cleaning(dataset: Dataset) -> None:
    b001 = item(dataset, "B001")
    assert b001["title"] == "LEGO & Bricks Set"
    assert b001["brand"] == "LEGO"
    assert b001["categories"] == ["Toys & Games", "Building Toys", "Bricks"]
    assert b001["image"] == "https://images.example/B001.jpg"  # high-res preferred
    assert b001["description"] == "Fun & colourful"
    b101 = item(dataset, "B101")
    assert b101["brand"] is None  # "NA"
    assert b101["categories"] == ["Beauty & Personal Care", "Skin Care", "Lips"]


def test_dict_literal_lines_and_duplicate_asins(dataset: Dataset) -> None:
    b002 = item(dataset, "B002")  # first (dict-literal) record is more complete than its duplicate
    assert b002["title"] == "Rag Doll 'Annie'"
    assert b002["brand"] is None  # "Unknown"
    assert b002["categories"] == ["Toys & Games", "Dolls & Accessories", "Dolls"]
    b003 = item(dataset, "B003")  # the bare first record is replaced by the fuller duplicate
    assert b003["title"] == "Jigsaw Puzzle 1000"
    assert b003["brand"] is None  # "N/A"
    assert dataset.source["duplicate_meta_asins"] == 2


def test_missing_title_falls_back_to_asin(dataset: Dataset) -> None:
    b004 = item(dataset, "B004")  # scripted title and "Generic" brand
    assert b004["title"] == "B004"
    assert b004["brand"] is None
    assert b004["categories"] == []


def test_color_is_the_majority_style_color(dataset: Dataset) -> None:
    colors = dataset.items.set_index("item_id")["color"].to_dict()
    assert colors["B001"] == "Red"  # Red x2 (one review trailing-space) beats Black x1
    assert colors["B003"] == "Blue & White"  # "Color Name:" key, HTML entity
    assert colors["B004"] == "Amber"  # 1-1 tie goes alphabetically first
    assert colors["B002"] is None  # only a Size style
    assert colors["B101"] is None


def test_item_colors_matches_brute_force() -> None:
    reviews = pd.DataFrame(
        {
            "item_id": ["x", "x", "x", "y", "y", "z"],
            "raw_color": [" Red", "Blue", "Red ", "Blue", "Azure", None],
        }
    )
    got = item_colors(reviews).to_dict()
    want: dict[str, str] = {}
    for asin, group in reviews.dropna().groupby("item_id"):
        counts = group["raw_color"].str.strip().value_counts()
        want[str(asin)] = sorted(c for c, n in counts.items() if n == counts.max())[0]
    assert got == want == {"x": "Red", "y": "Azure"}


def test_plain_json_files_and_single_file_path(tmp_path: Path) -> None:
    plain = load_amazon(copy_amazon(tmp_path / "plain", compress=False))
    gz = load_amazon(copy_amazon(tmp_path / "gz"))
    assert plain.fingerprint() == gz.fingerprint()
    single = load_amazon(tmp_path / "gz" / "Toys_5.json.gz")
    assert set(single.items["amazon_category"]) == {"Toys"}


def test_fast_and_slow_review_readers_agree(folder: Path) -> None:
    path = folder / "Toys_5.json.gz"
    fast = amazon_reviews._read_reviews_fast(path)
    assert fast is not None
    slow = amazon_reviews._read_reviews_slow(path)
    pd.testing.assert_frame_equal(fast, slow)


def test_dict_literal_reviews_go_through_the_slow_reader(tmp_path: Path) -> None:
    root = tmp_path / "lit"
    root.mkdir()
    rows = [
        {"reviewerID": "u", "asin": "a", "overall": 5.0, "unixReviewTime": 3, "style": {"Color:": " Tan"}}
    ]
    (root / "X_5.json").write_text("".join(repr(r) + "\n" for r in rows))
    ds = load_amazon(root)
    assert ds.items.loc[0, "color"] == "Tan"
    assert ds.source["missing_metadata"] == ["X_5.json"]


def _write_reviews(root: Path, lines: list[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    with gzip.open(root / "Bad_5.json.gz", "wt", encoding="utf-8") as out:
        out.write("".join(line + "\n" for line in lines))
    return root


GOOD = json.dumps({"reviewerID": "u", "asin": "a", "overall": 5.0, "unixReviewTime": 1})


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"reviewerID": "u", "asin": "a", "overall": 5.0}', "unixReviewTime"),
        ('{"reviewerID": "u", "asin": "a", "unixReviewTime": "soon"}', "not an integer"),
        ('{"reviewerID": "u", "asin": "a", "unixReviewTime": 1, "overall": "five"}', "not a number"),
        ("{this is not json", "not a JSON object"),
        ("[1, 2]", "one object per line"),
    ],
)
def test_bad_review_line_names_file_and_line(tmp_path: Path, bad: str, message: str) -> None:
    root = _write_reviews(tmp_path / "bad", [GOOD, "", GOOD, bad, GOOD])
    with pytest.raises(DataError, match=message) as info:
        load_amazon(root)
    assert info.value.path == root / "Bad_5.json.gz"
    assert info.value.line == 4
    assert "Bad_5.json.gz:4" in str(info.value)


def test_bad_metadata_line_names_file_and_line(tmp_path: Path) -> None:
    root = _write_reviews(tmp_path / "badmeta", [GOOD])
    with gzip.open(root / "meta_Bad.json.gz", "wt") as out:
        out.write('{"asin": "zz"}\n{"asin": "a", "title": broken}\n')
    with pytest.raises(DataError) as info:
        load_amazon(root)
    assert (info.value.path, info.value.line) == (root / "meta_Bad.json.gz", 2)


def test_truncated_gzip_is_a_data_error(tmp_path: Path) -> None:
    root = _write_reviews(tmp_path / "trunc", [GOOD] * 50)
    data = (root / "Bad_5.json.gz").read_bytes()
    (root / "Bad_5.json.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=r"Bad_5\.json\.gz"):
        load_amazon(root)


def test_empty_folder_and_detection(tmp_path: Path) -> None:
    assert not FORMATS["amazon"].detect(tmp_path)
    with pytest.raises(DataError, match="no Amazon 5-core review file"):
        load_amazon(tmp_path)
    assert FORMATS["amazon"].detect(copy_amazon(tmp_path / "a"))


def test_fixture_files_are_in_the_published_shape() -> None:
    # Guards the fixtures themselves: one object per line, some as Python literals.
    lines = (FIXTURES / "amazon" / "meta_Toys.json").read_text().splitlines()
    assert any(line.startswith("{'") for line in lines)
    assert all(json.loads(line)["reviewerID"] for line in (FIXTURES / "amazon" / "Toys_5.json").open())
