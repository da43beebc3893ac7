"""Amazon Reviews 2018 (UCSD, Ni et al. 2019), 5-core subsets, with product metadata.

A folder holds one or more categories, each a pair of files as published:

``<Category>_5.json.gz``
    one review per line (JSON): ``reviewerID``, ``asin``, ``overall``,
    ``unixReviewTime`` and an optional ``style`` such as ``{"Color:": " Black"}``.
``meta_<Category>.json.gz``
    one product per line: ``asin``, ``title``, ``brand``, ``category`` (root → leaf),
    ``imageURL`` / ``imageURLHighRes``, ``description``, ... Some releases write
    Python dict literals instead of JSON; both are accepted.

All categories merge into one product dataset; item ids stay ASINs and the
category a product came from is kept in the item column ``amazon_category``.
The cleaning rules applied to the metadata are listed in ``docs/sources.md``.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pandas as pd

from recworld.data.amazon_reviews import iter_lines, parse_record, read_reviews
from recworld.data.dataset import Dataset, Domain
from recworld.errors import DataError

FORMAT_NAME = "amazon"
REVIEW_SUFFIXES = ("_5.json.gz", "_5.json")
META_PREFIX = "meta_"

# Brands that name no brand at all; they become missing so a brand question never offers them.
PLACEHOLDER_BRANDS = frozenset(
    {
        "",
        "unknown",
        "unknow",
        "n/a",
        "na",
        "n.a.",
        "none",
        "null",
        "nan",
        "generic",
        "unbranded",
        "no brand",
        "not applicable",
        "does not apply",
        "other",
        "-",
        ".",
    }
)
# Category entries longer than this are breadcrumb trails or pasted text, not category names.
MAX_CATEGORY_CHARS = 60
MAX_CATEGORY_WORDS = 8
# Titles that are page scripts or style sheets scraped by mistake.
_JUNK_TITLE = re.compile(r"var\s+\w+\s*=|function\s*\(|getTime\(|\{[^}]*:[^}]*\}|^\s*[.#][\w-]+\s*\{")
_TAG = re.compile(r"<[^>]*>")
_ASIN_AT = re.compile(rb"""asin["']\s*:\s*["']([^"']+)["']""")
_BY_PREFIX = re.compile(r"^by\s+", re.IGNORECASE)
_VISIT_STORE = re.compile(r"^visit (?:amazon's|the)\s+(.+?)\s+(?:page|store)$", re.IGNORECASE)


# -- text cleaning -------------------------------------------------------------------------------


def clean_text(value: Any) -> str | None:
    """Unescape HTML entities (twice, for double-escaped text), drop tags, collapse blanks."""
    if value is None:
        return None
    if isinstance(value, list):  # some releases wrap a single string in a list
        value = " ".join(str(v) for v in value)
    text = str(value)
    # Most values hold neither entities nor tags; the checks skip the costly calls (1M-review loads).
    if "&" in text:
        text = html.unescape(html.unescape(text))
    if "<" in text:
        text = _TAG.sub(" ", text)
    return " ".join(text.split()) or None


def clean_title(value: Any) -> str | None:
    """A cleaned title, or None where it is missing or a scraped script / style sheet."""
    text = clean_text(value)
    if text is None or _JUNK_TITLE.search(text):
        return None
    return text


def clean_brand(value: Any) -> str | None:
    """Normalise a brand: strip ``by`` / ``Visit Amazon's X Page`` wrappers, drop placeholders."""
    text = clean_text(value)
    if text is None:
        return None
    text = _BY_PREFIX.sub("", text).strip()
    visit = _VISIT_STORE.match(text)
    if visit:
        text = visit.group(1).strip()
    if text.lower().strip(" .") in PLACEHOLDER_BRANDS or text.lower() in PLACEHOLDER_BRANDS:
        return None
    return text


def clean_categories(value: Any) -> list[str]:
    """A root → leaf path: entries cleaned, junk and breadcrumb strings dropped, repeats removed.

    2014-style records hold a list of paths; the first path is taken.
    """
    if not isinstance(value, list | tuple):
        return []
    if value and all(isinstance(v, list | tuple) for v in value):
        value = value[0]
    path: list[str] = []
    for entry in value:
        if not isinstance(entry, str):
            continue
        text = clean_text(entry)
        if text is None or "<" in text or ">" in text or "{" in text:
            continue
        if len(text) > MAX_CATEGORY_CHARS or len(text.split()) > MAX_CATEGORY_WORDS:
            continue
        if path and path[-1] == text:
            continue
        path.append(text)
    return path


def clean_color(value: Any) -> str | None:
    """A style colour value: cleaned, with placeholder values dropped."""
    text = clean_text(value)
    if text is None or text.lower() in PLACEHOLDER_BRANDS:
        return None
    return text


def item_colors(reviews: pd.DataFrame) -> pd.Series:
    """Per ASIN, the colour most reviews of it name in their style; ties go alphabetically first."""
    raw = reviews.loc[reviews["raw_color"].notna(), ["item_id", "raw_color"]]
    if raw.empty:
        return pd.Series(dtype=object)
    cleaned = {value: clean_color(value) for value in raw["raw_color"].unique()}
    colors = raw.assign(color=raw["raw_color"].map(cleaned)).dropna(subset=["color"])
    counts = colors.groupby(["item_id", "color"], sort=False).size().reset_index(name="n")
    counts = counts.sort_values(["item_id", "n", "color"], ascending=[True, False, True], kind="stable")
    first = counts.drop_duplicates("item_id", keep="first")
    return pd.Series(first["color"].to_numpy(dtype=object), index=first["item_id"].to_numpy(dtype=object))


# -- metadata ------------------------------------------------------------------------------------

_COMPLETENESS_FIELDS = ("title", "brand", "categories", "image", "description")


def _first_url(record: dict[str, Any]) -> str | None:
    for key in ("imageURLHighRes", "imageURL", "imUrl"):
        value = record.get(key)
        if isinstance(value, list):
            value = next((v for v in value if isinstance(v, str) and v.strip()), None)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def clean_meta_record(record: dict[str, Any]) -> dict[str, Any]:
    """Canonical item fields from one raw metadata record."""
    categories = record.get("category")
    if categories is None:
        categories = record.get("categories")
    description = clean_text(record.get("description"))
    return {
        "item_id": str(record["asin"]),
        "title": clean_title(record.get("title")),
        "brand": clean_brand(record.get("brand")),
        "categories": clean_categories(categories),
        "image": _first_url(record),
        "description": description,
    }


def _completeness(row: dict[str, Any]) -> int:
    return sum(1 for key in _COMPLETENESS_FIELDS if row.get(key))


def _quick_asin(raw: bytes) -> str | None:
    """The ASIN of a metadata line without parsing it (None if not found cheaply)."""
    at = raw.rfind(b"asin")  # the 2018 dumps put "asin" near the end of the line
    while at >= 0:
        match = _ASIN_AT.match(raw, at) if raw[at - 1 : at] in (b'"', b"'") else None
        if match is not None:
            return match.group(1).decode("utf-8", "replace")
        at = raw.rfind(b"asin", 0, at)
    return None


def _read_meta(path: Path, wanted: set[str], rows: dict[str, dict[str, Any]]) -> int:
    """Add cleaned rows for the wanted ASINs; a duplicate replaces a kept row only if more complete.

    Returns the number of duplicate ASIN lines seen.
    """
    duplicates = 0
    for line, raw in iter_lines(path):
        # Most catalogue lines describe products nobody reviewed; skip them before parsing.
        quick = _quick_asin(raw)
        if quick is not None and quick not in wanted:
            continue
        record = parse_record(raw, path, line)
        if "asin" not in record:
            raise DataError("metadata record lacks 'asin'", path=path, line=line)
        asin = str(record["asin"])
        if asin not in wanted:
            continue
        row = clean_meta_record(record)
        kept = rows.get(asin)
        if kept is not None:
            duplicates += 1
            if _completeness(row) <= _completeness(kept):
                continue
        rows[asin] = row
    return duplicates


# -- discovery and loading -----------------------------------------------------------------------


def review_files(path: Path) -> list[Path]:
    """The ``<Category>_5.json(.gz)`` files of a folder (or the file itself), sorted by name."""
    if path.is_file():
        return [path] if path.name.endswith(REVIEW_SUFFIXES) else []
    if not path.is_dir():
        return []
    return sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(REVIEW_SUFFIXES))


def category_name(review_file: Path) -> str:
    name = review_file.name
    for suffix in REVIEW_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def meta_file(review_file: Path) -> Path | None:
    """The metadata file that pairs with a review file, if it is there."""
    category = category_name(review_file)
    for suffix in (".json.gz", ".json"):
        candidate = review_file.parent / f"{META_PREFIX}{category}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def load(path: Path, name: str | None = None) -> Dataset:
    """Read every category in ``path`` into one product :class:`Dataset`."""
    return load_amazon(path, name=name)


def load_amazon(path: Path, *, name: str | None = None, images: Path | None = None) -> Dataset:
    """Read the 5-core reviews and metadata in ``path``; optionally join local images.

    ``images`` is a folder of ``<asin>.jpg|png`` files or an Amazon Berkeley Objects
    root (see :mod:`recworld.data.images`); matched items get a local ``image`` path.
    """
    root = Path(path)
    files = review_files(root)
    if not files:
        raise DataError("no Amazon 5-core review file (<Category>_5.json.gz) found", path=root)
    frames = []
    for review_file in files:
        frame = read_reviews(review_file)
        frame["amazon_category"] = category_name(review_file)
        frames.append(frame)
    reviews = pd.concat(frames, ignore_index=True)
    if reviews.empty:
        raise DataError("the review files hold no reviews", path=root)
    before = len(reviews)
    # The 2018 dumps repeat some reviews verbatim; the same (user, item, time) counts once.
    reviews = reviews.drop_duplicates(["user_id", "item_id", "timestamp"], keep="first")
    category_of = reviews.drop_duplicates("item_id", keep="first").set_index("item_id")["amazon_category"]
    reviewed = set(category_of.index)

    rows: dict[str, dict[str, Any]] = {}
    duplicates = 0
    missing_meta: list[str] = []
    for review_file in files:
        meta = meta_file(review_file)
        if meta is None:
            missing_meta.append(review_file.name)
            continue
        duplicates += _read_meta(meta, reviewed, rows)

    items = _items_frame(rows, category_of, item_colors(reviews))
    if images is not None:
        from recworld.data.images import attach_images

        items = attach_images(items, Path(images))
    category_label = "+".join(category_name(f) for f in files)
    return Dataset.from_frames(
        name=name or f"amazon-{category_label}".lower(),
        domain=Domain.PRODUCT,
        interactions=reviews.loc[:, ["user_id", "item_id", "timestamp", "rating"]],
        items=items,
        source={
            "format": FORMAT_NAME,
            "path": str(root),
            "categories": [category_name(f) for f in files],
            "duplicate_reviews_dropped": before - len(reviews),
            "duplicate_meta_asins": duplicates,
            "missing_metadata": missing_meta,
            "items_without_metadata": len(reviewed - set(rows)),
        },
    )


def _items_frame(rows: dict[str, dict[str, Any]], category_of: pd.Series, colors: pd.Series) -> pd.DataFrame:
    asins = sorted(category_of.index)
    frame = pd.DataFrame.from_records([rows.get(asin) or {"item_id": asin} for asin in asins])
    for column in ("title", "brand", "image", "description"):
        if column not in frame.columns:
            frame[column] = None
    if "categories" not in frame.columns:
        frame["categories"] = None
    frame["categories"] = frame["categories"].map(lambda v: v if isinstance(v, list) else [])
    frame["color"] = frame["item_id"].map(colors).astype(object)
    frame["amazon_category"] = frame["item_id"].map(category_of).astype(object)
    return frame
