"""Real anchors from any RecWorld dataset: each user a demographic record and timestamped records.

MovieLens users have real age, gender, occupation and zip code, and their
timestamped ratings stand for watching events. Amazon products add their leaf category
and brand to each record. A record's domain and behaviour
type come per item from :mod:`recworld.lunar.anchors.domains`: Amazon items by the
category file they came from (``amazon_category``), other datasets by the dataset's
domain.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from recworld.data import Dataset
from recworld.lunar.anchors.domains import DomainMap
from recworld.lunar.anchors.user import AnchorUser
from recworld.lunar.schemas import BehaviourRecord, Demographic, FieldValue, Provenance


def demographic(user_id: str, users: pd.DataFrame) -> Demographic:
    """The demographic record of ``user_id`` from a dataset's user table (indexed by user id)."""
    if user_id not in users.index:
        return Demographic(user_id=user_id)
    row = users.loc[user_id]

    def get(name: str) -> str | None:
        if name not in row.index or pd.isna(row[name]):
            return None
        return str(row[name])

    age = get("age")
    zip_code = get("zip_code")
    return Demographic(
        user_id=user_id,
        age=None if age is None else int(age),
        gender=get("gender"),
        occupation=get("occupation"),
        location=None if zip_code is None else f"zip {zip_code}",
    )


def _product_fields(item: pd.Series, columns: pd.Index) -> dict[str, FieldValue]:
    """A product's leaf category (``Ground Coffee`` of Grocery > ... > Ground Coffee) and brand."""
    out: dict[str, FieldValue] = {}
    path = item["categories"] if "categories" in columns else None
    if isinstance(path, list | tuple | np.ndarray) and len(path) > 1:
        out["category"] = str(path[-1])
    brand = item["brand"] if "brand" in columns else None
    if isinstance(brand, str) and brand.strip():
        out["brand"] = brand.strip()
    return out


def dataset_users(dataset: Dataset, domains: DomainMap) -> dict[str, AnchorUser]:
    """Every user of a dataset as an anchor user, each record in its item's domain."""
    inter = dataset.interactions
    items = dataset.items.set_index("item_id")
    users = dataset.users.set_index("user_id")
    by_category = "amazon_category" in items.columns
    fixed = domains.lookup(dataset.domain.value)
    out: dict[str, AnchorUser] = {}
    for user_id, rows in inter.groupby("user_id", sort=True):
        uid = str(user_id)
        records = []
        ordered: list[dict[Hashable, Any]] = rows.sort_values("timestamp", kind="stable").to_dict("records")
        for n, row in enumerate(ordered):
            item = items.loc[row["item_id"]]
            domain, btype = domains.lookup(str(item["amazon_category"])) if by_category else fixed
            fields: dict[str, FieldValue] = {"title": str(item["title"])} if pd.notna(item["title"]) else {}
            genres = item["genres"] if "genres" in items.columns else None
            if genres is not None and not isinstance(genres, float) and len(genres):
                fields["genres"] = ", ".join(genres)
            fields |= _product_fields(item, items.columns)
            if not np.isnan(row["rating"]):
                fields["rating"] = float(row["rating"])
            records.append(
                BehaviourRecord(
                    record_id=f"anchor-{uid}-{n:05d}",
                    user_id=uid,
                    timestamp=int(row["timestamp"]),
                    domain=domain,
                    type=btype,
                    fields=fields,
                    provenance=Provenance.ANCHOR,
                )
            )
        out[uid] = AnchorUser(demographic(uid, users), tuple(records))
    return out
