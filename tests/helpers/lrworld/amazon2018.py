"""A small Amazon Reviews 2018 category in the published file format, for build tests.

``<Category>_5.json.gz`` holds one review per line (``reviewerID``, ``asin``,
``overall``, ``unixReviewTime``, ``style``), ``meta_<Category>.json.gz`` one
product per line (``asin``, ``title``, ``brand``, ``category``), as the UCSD
release ships them. Users draw products from one global popularity law (no
taste structure a neural model could find beyond popularity), and every fifth
product has a variant: a second ASIN with the same title, bought in the same
second as its pair, as duplicated variant reviews are in the real release.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

CATEGORY = "Tiny_Tools"
ROOTS = ("Tools & Home Improvement", "Home & Kitchen", "Garden", "Office Products")
BRANDS = ("Acme", "Bosch", "Makita", "Stanley", "DeWalt", "Ryobi", "Black+Decker")
COLOURS = ("Black", "Red", "Blue", "Green", "Yellow", "Silver")


def write_category(
    root: Path, *, n_users: int = 320, n_products: int = 90, per_user: int = 9, seed: int = 3
) -> Path:
    """Write ``root/<CATEGORY>_5.json.gz`` and ``root/meta_<CATEGORY>.json.gz``; returns ``root``."""
    gen = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    asins = [f"B{p:05d}" for p in range(n_products)]
    twin = {p: f"B9{p:04d}" for p in range(0, n_products, 5)}  # the variant ASIN of every fifth product
    weights = 1.0 / (np.arange(n_products) + 4.0)
    with gzip.open(root / f"{CATEGORY}_5.json.gz", "wt", encoding="utf-8") as out:
        for u in range(n_users):
            picks = gen.choice(n_products, size=per_user, replace=False, p=weights / weights.sum())
            for step, p in enumerate(picks.tolist()):
                stamp = 1_500_000_000 + 86_400 * (u % 50) + 3_600 * step
                colour = COLOURS[(p + u) % len(COLOURS)]
                review = {
                    "overall": float(1 + (p + u) % 5),
                    "verified": True,
                    "reviewerID": f"A{u:04d}",
                    "asin": asins[p],
                    "style": {"Color:": f" {colour}"},
                    "unixReviewTime": stamp,
                }
                out.write(json.dumps(review) + "\n")
                if p in twin:  # the same purchase reviewed again under the variant's ASIN
                    out.write(json.dumps({**review, "asin": twin[p]}) + "\n")
    with gzip.open(root / f"meta_{CATEGORY}.json.gz", "wt", encoding="utf-8") as out:
        for p in range(n_products):
            root_name = ROOTS[p % len(ROOTS)]
            meta = {
                "asin": asins[p],
                "title": f"Cordless Tool {p}",
                "brand": BRANDS[p % len(BRANDS)],
                "category": [root_name, f"{root_name} Tools {p % 3}", f"Leaf {p % 7}"],
            }
            out.write(json.dumps(meta) + "\n")
            if p in twin:
                variant = {**meta, "asin": twin[p], "brand": BRANDS[(p + 1) % len(BRANDS)]}
                variant["category"] = [root_name, f"{root_name} Tools {p % 3}", f"Leaf {(p + 1) % 7}"]
                out.write(json.dumps(variant) + "\n")
    return root
