"""Attach local image files to items: an ``<id>.jpg`` folder or Amazon Berkeley Objects.

The item field ``image`` ends up holding an absolute local path where a file was
found; items without a match keep whatever ``image`` they had (often a URL).
Only files inside the image folder count: a listing path with ``..``, an
absolute path or a symbolic link leading out of it is ignored. Whether a file
is really an image is checked where it is used
(:func:`recworld.data.image_refs.check_image`).

Amazon Berkeley Objects (ABO, Collins et al. 2022) ships

``images/metadata/images.csv(.gz)``
    ``image_id,height,width,path`` with ``path`` relative to ``images/small/``;
``listings/metadata/listings_*.json(.gz)``
    one listing per line with ``item_id``, ``main_image_id``, ``brand`` and
    ``item_name`` (lists of ``{"language_tag", "value"}``).

Movie posters need nothing here: ``recworld.data.metadata.apply_metadata`` resolves a
metadata file's relative ``poster`` paths against that file's folder.

Listings are joined to items in two steps (see ``docs/sources.md``): first on the
ABO ``item_id`` equal to the ASIN; then, for items still without an image, on the
normalised (brand, English item name) pair equal to the item's (brand, title), used
only when that pair names exactly one listing and exactly one item.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pandas as pd

from recworld.capped import check_regular, open_text
from recworld.errors import DataError

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp")
_SPACE = re.compile(r"\s+")


def _open_text(path: Path) -> IO[str]:
    if path.name.endswith(".gz"):
        return gzip.open(check_regular(path), "rt", encoding="utf-8")
    return open_text(path, "utf-8")


# -- a plain folder of <id>.<ext> files ----------------------------------------------------------


def folder_images(folder: Path) -> dict[str, Path]:
    """Map ``stem -> file`` for the image files directly inside ``folder``.

    When one id has several extensions the first in :data:`IMAGE_EXTENSIONS` order wins.
    """
    found: dict[str, Path] = {}
    rank = {ext: i for i, ext in enumerate(IMAGE_EXTENSIONS)}
    root = folder.resolve()
    for file in sorted(folder.iterdir()):
        ext = file.suffix.lower()
        if ext not in rank or not file.is_file() or not file.resolve().is_relative_to(root):
            continue  # a symbolic link out of the folder is not this folder's image
        kept = found.get(file.stem)
        if kept is None or rank[ext] < rank[kept.suffix.lower()]:
            found[file.stem] = file.resolve()
    return found


# -- Amazon Berkeley Objects ---------------------------------------------------------------------


def _first(root: Path, *patterns: str) -> Path | None:
    for pattern in patterns:
        hits = sorted(root.glob(pattern))
        if hits:
            return hits[0]
    return None


def is_abo_root(root: Path) -> bool:
    """True when ``root`` holds an ABO ``images.csv(.gz)`` somewhere in the published layout."""
    return _abo_images_csv(root) is not None


def _abo_images_csv(root: Path) -> Path | None:
    return _first(
        root,
        "images.csv",
        "images.csv.gz",
        "metadata/images.csv*",
        "images/metadata/images.csv*",
        "*/images/metadata/images.csv*",
    )


def read_abo_images(images_csv: Path, image_root: Path | None = None) -> dict[str, Path]:
    """Map ``image_id -> local file`` from ABO's ``images.csv``; only files that exist are kept."""
    try:
        frame = pd.read_csv(images_csv, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read ABO image table: {exc}", path=images_csv) from exc
    for column in ("image_id", "path"):
        if column not in frame.columns:
            raise DataError(f"ABO image table lacks the column {column!r}", path=images_csv, field=column)
    if image_root is None:
        # images/metadata/images.csv.gz -> images/small/<path>; a flat copy keeps files beside it.
        small = images_csv.parent.parent / "small"
        image_root = small if small.is_dir() else images_csv.parent
    out: dict[str, Path] = {}
    root = image_root.resolve()
    for image_id, rel in zip(frame["image_id"], frame["path"], strict=True):
        file = (image_root / rel).resolve()
        # A path with ``..``, an absolute path or a link that leaves the image folder is dropped.
        if rel and file.is_relative_to(root) and file.is_file():
            out[image_id] = file
    return out


def _english(values: Any) -> str | None:
    """The first English (``en_*``) value of an ABO multilingual field, else the first value."""
    if not isinstance(values, list) or not values:
        return None
    english = [v for v in values if isinstance(v, dict) and str(v.get("language_tag", "")).startswith("en")]
    candidates = english or [v for v in values if isinstance(v, dict)]
    if not candidates:
        return None
    chosen = candidates[0]
    value = chosen.get("value")
    return str(value) if value else None


def iter_abo_listings(root: Path) -> Iterator[dict[str, Any]]:
    """Every listing record under ``root`` (``listings_*.json(.gz)`` files, any depth)."""
    files = sorted(root.glob("**/listings_*.json*"))
    for file in files:
        with _open_text(file) as handle:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"bad listing JSON: {exc.msg}", path=file, line=line_no) from exc
                if not isinstance(record, dict) or "item_id" not in record:
                    raise DataError("listing lacks 'item_id'", path=file, line=line_no)
                yield record


def _norm(text: Any) -> str:
    return _SPACE.sub(" ", str(text)).strip().casefold() if text else ""


def abo_matches(items: pd.DataFrame, listings: list[dict[str, Any]]) -> dict[str, str]:
    """Map ``item_id -> ABO main_image_id`` by ASIN, then by a unique (brand, title) pair."""
    by_id = {str(r["item_id"]): r for r in listings if r.get("main_image_id")}
    matched: dict[str, str] = {}
    for asin in items["item_id"].astype(str):
        listing = by_id.get(asin)
        if listing is not None:
            matched[asin] = str(listing["main_image_id"])
    if "title" not in items.columns or "brand" not in items.columns:
        return matched

    def pairs(rows: list[tuple[str, str, str]]) -> dict[tuple[str, str], str | None]:
        out: dict[tuple[str, str], str | None] = {}
        for key_brand, key_title, value in rows:
            if not key_brand or not key_title:
                continue
            key = (key_brand, key_title)
            out[key] = None if key in out else value  # None marks an ambiguous pair
        return out

    listing_pairs = pairs(
        [
            (_norm(_english(r.get("brand"))), _norm(_english(r.get("item_name"))), str(r["main_image_id"]))
            for r in by_id.values()
        ]
    )
    item_pairs = pairs(
        [
            (_norm(b), _norm(t), str(i))
            for i, b, t in zip(items["item_id"], items["brand"], items["title"], strict=True)
        ]
    )
    for key, owner in item_pairs.items():
        image_id = listing_pairs.get(key)
        if owner is not None and image_id is not None and owner not in matched:
            matched[owner] = image_id
    return matched


def abo_images(items: pd.DataFrame, root: Path) -> dict[str, Path]:
    """Map ``item_id -> local image file`` through an ABO download at ``root``."""
    images_csv = _abo_images_csv(root)
    if images_csv is None:
        raise DataError("no ABO images.csv(.gz) found", path=root)
    files = read_abo_images(images_csv)
    matches = abo_matches(items, list(iter_abo_listings(root)))
    return {item: files[image] for item, image in matches.items() if image in files}


# -- the one entry point loaders call ------------------------------------------------------------


def attach_images(items: pd.DataFrame, source: Path) -> pd.DataFrame:
    """Set ``image`` to a local path for every item found in ``source``.

    ``source`` is an ABO root (detected by its ``images.csv``) or a folder of
    ``<item_id>.<ext>`` files.
    """
    root = Path(source)
    if not root.is_dir():
        raise DataError("image source is not a folder", path=root)
    if is_abo_root(root):
        found = abo_images(items, root)
    else:
        files = folder_images(root)
        found = {i: files[i] for i in items["item_id"].astype(str) if i in files}
    out = items.copy()
    if "image" not in out.columns:
        out["image"] = None
    previous = [None if pd.isna(v) else v for v in out["image"]]
    local = [str(found[i]) if i in found else None for i in out["item_id"].astype(str)]
    out["image"] = pd.Series(
        [a or b for a, b in zip(local, previous, strict=True)], index=out.index, dtype=object
    )
    return out
