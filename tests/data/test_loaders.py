"""What each loader makes of the quirks of its format."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from helpers.data_writers import write_ml100k
from recworld.data import Dataset, load_source
from recworld.data.movielens import ML100K_GENRES, split_title


def _item(dataset: Dataset, item_id: str) -> dict[str, object]:
    rows = dataset.items.loc[dataset.items["item_id"] == item_id]
    assert len(rows) == 1
    return dict(rows.iloc[0])


@pytest.mark.parametrize(
    ("raw", "title", "year"),
    [
        ("Toy Story (1995)", "Toy Story", 1995),
        ("Seven (Se7en) (1995)", "Seven (Se7en)", 1995),
        ("Millions (2004) ", "Millions", 2004),
        ("Babylon 5", "Babylon 5", None),
        ("Series (2007-2013)", "Series", 2007),
        ("(1995)", "(1995)", None),
    ],
)
def test_split_title(raw: str, title: str, year: int | None) -> None:
    assert split_title(raw) == (title, year)


def test_ml100k_quirks(ml100k_dir: Path) -> None:
    dataset = load_source(ml100k_dir)
    cafe = _item(dataset, "2")
    assert (cafe["title"], cafe["year"]) == ("Café au Lait", 1993)  # latin-1 decoded
    assert cafe["genres"] == ["Comedy", "Romance"]
    assert _item(dataset, "3")["genres"] == []  # the "unknown" flag is no genre
    no_year = _item(dataset, "5")
    assert (no_year["title"], no_year["year"]) == ("Title Without Year", 1997)  # year from release date
    assert _item(dataset, "1")["genres"] == ["Animation", "Children's", "Comedy"]
    users = dataset.users.set_index("user_id")
    assert users.loc["10", "zip_code"] == "T8H1N"
    assert users.loc["2", "age"] == 53


def test_ml100k_without_u_genre_uses_the_standard_19(tmp_path: Path) -> None:
    with_file = load_source(write_ml100k(tmp_path / "a"))
    without = load_source(write_ml100k(tmp_path / "b", with_genre_file=False))
    assert len(ML100K_GENRES) == 19
    pd.testing.assert_frame_equal(with_file.items, without.items)


def test_ml100k_u_genre_names_are_used(tmp_path: Path) -> None:
    root = write_ml100k(tmp_path / "a")
    text = (root / "u.genre").read_text().replace("Comedy|5", "Funny|5")
    (root / "u.genre").write_text(text)
    assert _item(load_source(root), "2")["genres"] == ["Funny", "Romance"]


def test_recbole_quirks(recbole_dir: Path) -> None:
    dataset = load_source(recbole_dir)
    assert dataset.name == "tiny"
    unknown = _item(dataset, "3")
    assert pd.isna(unknown["year"]) and unknown["genres"] == []
    assert _item(dataset, "4")["title"] == "Misérables, Les"
    assert dataset.source["ignored"] == ["kg", "link"]


def test_ml1m_codes_decoded(ml1m_dir: Path) -> None:
    dataset = load_source(ml1m_dir)
    users = dataset.users.set_index("user_id")
    assert users.loc["1", "occupation"] == "K-12 student"
    assert (users.loc["1", "age"], users.loc["1", "age_group"]) == (1, "Under 18")
    assert (users.loc["2", "age_group"], users.loc["2", "occupation"]) == ("56+", "self-employed")
    assert _item(dataset, "2")["title"] == "Café au Lait"
    assert _item(dataset, "3")["title"] == "City of Lost Children, The"


def test_ml25m_csv_quirks(ml25m_dir: Path) -> None:
    dataset = load_source(ml25m_dir)
    assert _item(dataset, "2")["title"] == "Café au Lait, Le"  # quoted title with a comma
    no_year = _item(dataset, "5")
    assert pd.isna(no_year["year"]) and no_year["genres"] == []  # "(no genres listed)"
    toy = _item(dataset, "1")
    assert (toy["imdb_id"], toy["tmdb_id"]) == ("0114709", "862")  # leading zeros kept
    assert _item(dataset, "2")["tmdb_id"] is None
    assert dataset.users.columns.tolist() == ["user_id"]


def test_zip_and_parent_folder_are_accepted(tmp_path: Path, ml100k_dir: Path) -> None:
    import shutil

    archive = shutil.make_archive(str(tmp_path / "ml-100k"), "zip", ml100k_dir.parent, ml100k_dir.name)
    from_zip = load_source(Path(archive))
    from_parent = load_source(ml100k_dir.parent)
    assert from_zip.fingerprint() == from_parent.fingerprint() == load_source(ml100k_dir).fingerprint()
