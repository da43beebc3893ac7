"""Joining items to local images: a folder of <id>.jpg files, or Amazon Berkeley Objects."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from helpers.source_writers import copy_amazon
from recworld.data.amazon import load_amazon
from recworld.data.images import abo_matches, attach_images, folder_images, read_abo_images
from recworld.errors import DataError


def items_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item_id": ["B001", "B002", "B003", "B004"],
            "title": ["Red Mug", "Blue Cup", "Plate", "Bowl"],
            "brand": ["Acme", "Acme", "Zed", "Zed"],
            "image": ["https://x/1.jpg", None, None, None],
        }
    )


def test_folder_join_prefers_jpg_and_keeps_urls_elsewhere(tmp_path: Path) -> None:
    for name in ("B001.png", "B001.jpg", "B003.webp", "notes.txt", "B999.jpg"):
        (tmp_path / name).write_bytes(b"x")
    assert set(folder_images(tmp_path)) == {"B001", "B003", "B999"}
    out = attach_images(items_frame(), tmp_path)
    images = out.set_index("item_id")["image"].to_dict()
    assert images["B001"] == str((tmp_path / "B001.jpg").resolve())
    assert images["B003"] == str((tmp_path / "B003.webp").resolve())
    assert images["B002"] is None
    assert images["B004"] is None


def write_abo(root: Path, listings: list[dict[str, object]], images: dict[str, str]) -> Path:
    meta = root / "images" / "metadata"
    meta.mkdir(parents=True)
    with gzip.open(meta / "images.csv.gz", "wt") as out:
        out.write("image_id,height,width,path\n")
        for image_id, rel in images.items():
            out.write(f"{image_id},100,100,{rel}\n")
    for image_id, rel in images.items():
        if image_id != "missing":
            file = root / "images" / "small" / rel
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(b"img")
    lst = root / "listings" / "metadata"
    lst.mkdir(parents=True)
    with gzip.open(lst / "listings_0.json.gz", "wt") as out:
        out.write("".join(json.dumps(r) + "\n" for r in listings))
    return root


def en(value: str) -> list[dict[str, str]]:
    return [{"language_tag": "de_DE", "value": value + " (de)"}, {"language_tag": "en_US", "value": value}]


def test_abo_join_by_asin_then_unique_brand_title(tmp_path: Path) -> None:
    listings = [
        {"item_id": "B001", "main_image_id": "img1", "brand": en("Other"), "item_name": en("Other")},
        {"item_id": "ABO1", "main_image_id": "img2", "brand": en("ACME"), "item_name": en("Blue  cup")},
        {"item_id": "ABO2", "main_image_id": "img3", "brand": en("Zed"), "item_name": en("Plate")},
        {"item_id": "ABO3", "main_image_id": "img4", "brand": en("Zed"), "item_name": en("Plate")},
        {"item_id": "ABO4", "main_image_id": "missing", "brand": en("Zed"), "item_name": en("Bowl")},
        {"item_id": "ABO5", "brand": en("x")},  # no main image: ignored
    ]
    root = write_abo(
        tmp_path / "abo",
        listings,
        {
            "img1": "aa/img1.jpg",
            "img2": "bb/img2.jpg",
            "img3": "cc/img3.jpg",
            "img4": "dd/img4.jpg",
            "missing": "m.jpg",
        },
    )
    matches = abo_matches(items_frame(), listings)
    # B001 by ASIN; B002 by (brand, title) case/space-insensitively; "Zed Plate" names two listings
    # so B003 stays unmatched; B004 matches a listing whose image file is absent.
    assert matches == {"B001": "img1", "B002": "img2", "B004": "missing"}
    images = attach_images(items_frame(), root).set_index("item_id")["image"].to_dict()
    assert images["B001"] == str((root / "images" / "small" / "aa" / "img1.jpg").resolve())
    assert images["B002"] == str((root / "images" / "small" / "bb" / "img2.jpg").resolve())
    assert images["B003"] is None
    assert images["B004"] is None


def test_bad_listing_line_names_file_and_line(tmp_path: Path) -> None:
    root = write_abo(tmp_path / "abo", [{"item_id": "B001", "main_image_id": "img1"}], {"img1": "a/img1.jpg"})
    path = root / "listings" / "metadata" / "listings_0.json.gz"
    with gzip.open(path, "wt") as out:
        out.write('{"item_id": "B001"}\n{oops\n')
    with pytest.raises(DataError) as info:
        attach_images(items_frame(), root)
    assert (info.value.path, info.value.line) == (path, 2)


def test_load_amazon_with_image_folder(tmp_path: Path) -> None:
    pictures = tmp_path / "pictures"
    pictures.mkdir()
    (pictures / "B003.jpg").write_bytes(b"x")
    ds = load_amazon(copy_amazon(tmp_path / "amz"), images=pictures)
    images = ds.items.set_index("item_id")["image"].to_dict()
    assert images["B003"] == str((pictures / "B003.jpg").resolve())
    assert images["B001"] == "https://images.example/B001.jpg"


def test_image_source_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a folder"):
        attach_images(items_frame(), tmp_path / "nope")


def test_paths_leading_out_of_the_image_folder_are_dropped(tmp_path: Path) -> None:
    secret = tmp_path / "private" / "secret.jpg"
    secret.parent.mkdir()
    secret.write_bytes(b"x")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "B001.jpg").symlink_to(secret)  # a link out of the folder
    (folder / "B002.jpg").write_bytes(b"x")
    assert set(folder_images(folder)) == {"B002"}

    root = write_abo(
        tmp_path / "abo",
        [{"item_id": "B001", "main_image_id": "esc"}, {"item_id": "B002", "main_image_id": "ok"}],
        {"ok": "aa/ok.jpg"},
    )
    with gzip.open(root / "images" / "metadata" / "images.csv.gz", "at") as out:
        out.write("esc,100,100,../../../private/secret.jpg\n")
        out.write(f"abs,100,100,{secret}\n")
    found = read_abo_images(root / "images" / "metadata" / "images.csv.gz")
    assert set(found) == {"ok"}
    images = attach_images(items_frame(), root).set_index("item_id")["image"]
    assert images["B001"] == "https://x/1.jpg" and images["B002"].endswith("ok.jpg")
