"""The loader contract: every registered format must pass this class.

A new format (Amazon, Netflix, LastFM) adds a subclass that sets ``format_name``,
writes its fixture in ``write`` and states what that fixture holds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest

from helpers.data_writers import (
    N_INTERACTIONS,
    N_ITEMS,
    N_USERS,
    RATINGS,
    write_ml1m,
    write_ml25m,
    write_ml100k,
    write_recbole,
)
from helpers.source_writers import write_amazon_world, write_lastfm_world, write_netflix_world
from recworld.data import FORMATS, Dataset, detect_format, load_source
from recworld.data.dataset import ITEM_FIELDS, USER_FIELDS, FieldKind


class LoaderContract:
    format_name: ClassVar[str]
    n_users: ClassVar[int] = N_USERS
    n_items: ClassVar[int] = N_ITEMS
    n_interactions: ClassVar[int] = N_INTERACTIONS
    item_fields: ClassVar[tuple[str, ...]] = ("title", "year", "genres")

    def write(self, root: Path) -> Path:
        raise NotImplementedError

    @pytest.fixture
    def root(self, tmp_path: Path) -> Path:
        return self.write(tmp_path / "src")

    @pytest.fixture
    def dataset(self, root: Path) -> Dataset:
        return FORMATS[self.format_name].load(root, "tiny")

    def test_detected_as_this_format(self, root: Path) -> None:
        assert detect_format(root).name == self.format_name

    def test_counts(self, dataset: Dataset) -> None:
        summary = dataset.summary()
        assert (summary["users"], summary["items"], summary["interactions"]) == (
            self.n_users,
            self.n_items,
            self.n_interactions,
        )
        for field in self.item_fields:
            assert dataset.has_item_field(field), field

    def test_interaction_columns_and_dtypes(self, dataset: Dataset) -> None:
        inter = dataset.interactions
        assert list(inter.columns) == ["user_id", "item_id", "timestamp", "rating"]
        assert str(inter["timestamp"].dtype) == "int64"
        assert str(inter["rating"].dtype) == "float64"
        for column in ("user_id", "item_id"):
            assert pd.api.types.is_string_dtype(inter[column])
            assert all(isinstance(v, str) for v in inter[column])

    def test_histories_sorted_by_time(self, dataset: Dataset) -> None:
        inter = dataset.interactions
        assert inter["user_id"].is_monotonic_increasing
        for _, history in inter.groupby("user_id"):
            assert history["timestamp"].is_monotonic_increasing

    def test_ratings_kept(self, dataset: Dataset) -> None:
        got = {(r.user_id, r.item_id, r.rating, r.timestamp) for r in dataset.interactions.itertuples()}
        want = {(str(u), str(i), float(r), t) for u, i, r, t in RATINGS}
        assert got == want

    def test_item_and_user_tables(self, dataset: Dataset) -> None:
        items, users = dataset.items, dataset.users
        assert items["item_id"].is_unique and users["user_id"].is_unique
        assert all(isinstance(v, str) for v in items["item_id"])
        assert set(dataset.interactions["item_id"]) <= set(items["item_id"])
        for title in items["title"]:
            assert isinstance(title, str) and title
            assert not re.search(r"\(\d{4}\)\s*$", title), title
        for column in items.columns:
            kind = ITEM_FIELDS.get(column)
            if kind is FieldKind.LIST:
                assert all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in items[column])
            elif kind is FieldKind.INT:
                assert str(items[column].dtype) == "Int64"
        for column in users.columns:
            if USER_FIELDS.get(column) is FieldKind.INT:
                assert str(users[column].dtype) == "Int64"

    def test_save_load_round_trip(self, dataset: Dataset, tmp_path: Path) -> None:
        again = Dataset.load(dataset.save(tmp_path / "saved"))
        for mine, theirs in zip(
            (dataset.interactions, dataset.items, dataset.users),
            (again.interactions, again.items, again.users),
            strict=True,
        ):
            pd.testing.assert_frame_equal(mine, theirs, check_dtype=False)
        assert again.fingerprint() == dataset.fingerprint()
        assert again.summary() == dataset.summary()

    def test_load_source_matches_direct_load_and_caches(self, root: Path, dataset: Dataset) -> None:
        first = load_source(root, name="tiny")
        second = load_source(root, name="tiny")
        assert first.fingerprint() == dataset.fingerprint() == second.fingerprint()
        assert first.source["format"] == self.format_name


class TestML100K(LoaderContract):
    format_name = "ml-100k"

    def write(self, root: Path) -> Path:
        return write_ml100k(root)


class TestRecBole(LoaderContract):
    format_name = "recbole"

    def write(self, root: Path) -> Path:
        return write_recbole(root)


class TestML1M(LoaderContract):
    format_name = "ml-1m"

    def write(self, root: Path) -> Path:
        return write_ml1m(root)


class TestML25M(LoaderContract):
    format_name = "ml-25m"

    def write(self, root: Path) -> Path:
        return write_ml25m(root)


def test_every_registered_format_has_a_contract_class() -> None:
    covered = {cls.format_name for cls in LoaderContract.__subclasses__()}
    assert covered == set(FORMATS)


class TestAmazon(LoaderContract):
    format_name = "amazon"
    item_fields = ("title", "brand", "color", "categories", "image")

    def write(self, root: Path) -> Path:
        return write_amazon_world(root)


class TestNetflix(LoaderContract):
    format_name = "netflix"
    item_fields = ("title", "year")

    def write(self, root: Path) -> Path:
        return write_netflix_world(root)

    def test_ratings_kept(self, dataset: Dataset) -> None:  # dates only: times fall to UTC midnight
        got = {(r.user_id, r.item_id, r.rating, r.timestamp) for r in dataset.interactions.itertuples()}
        assert got == {(str(u), str(i), float(r), t - t % 86400) for u, i, r, t in RATINGS}


class TestLastFM(LoaderContract):
    format_name = "lastfm"
    item_fields = ("title", "genres", "image")

    def write(self, root: Path) -> Path:
        return write_lastfm_world(root)

    def test_ratings_kept(self, dataset: Dataset) -> None:  # play counts order pairs; no ratings
        got = {(r.user_id, r.item_id, r.timestamp) for r in dataset.interactions.itertuples()}
        assert got == {(str(u), str(i), t) for u, i, _, t in RATINGS}
        assert dataset.interactions["rating"].isna().all()


class TestLLaRA(LoaderContract):
    """LLaRA-style LastFM sequences: each sequence is one user (its history, then its next artist)."""

    format_name = "llara-lastfm"
    n_users = 3
    n_items = 5  # artists interacted with; a6, a candidate only, is in the catalogue but not counted
    n_interactions = 3 + 2 + 4
    item_fields = ("title", "genres")

    def write(self, root: Path) -> Path:
        root.mkdir(parents=True, exist_ok=True)

        def artist(i: int) -> dict[str, object]:
            return {"id": f"a{i}", "name": f"Artist {i}", "genres": ["rock" if i % 2 else "pop"]}

        sequences = [
            ("s1", [1, 2], 3, [3, 4, 5, 6]),
            ("s2", [4], 5, []),
            ("s3", [1, 3, 5], 2, []),
        ]
        with (root / "llara_sequences.jsonl").open("w", encoding="utf-8") as out:
            for seq_id, history, nxt, candidates in sequences:
                record: dict[str, object] = {
                    "seq_id": seq_id,
                    "history": [artist(i) for i in history],
                    "next": artist(nxt),
                }
                if candidates:
                    record["candidates"] = [artist(i) for i in candidates]
                out.write(json.dumps(record) + "\n")
        return root

    def test_ratings_kept(self, dataset: Dataset) -> None:  # sequences carry order, not ratings
        got = {(r.user_id, r.item_id, r.timestamp) for r in dataset.interactions.itertuples()}
        assert got == {
            ("s1", "a1", 0), ("s1", "a2", 1), ("s1", "a3", 2),
            ("s2", "a4", 0), ("s2", "a5", 1),
            ("s3", "a1", 0), ("s3", "a3", 1), ("s3", "a5", 2), ("s3", "a2", 3),
        }  # fmt: skip
        assert dataset.interactions["rating"].isna().all()
        assert "a6" in set(dataset.items["item_id"])
