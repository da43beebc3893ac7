"""Atomic outputs, the journal and JSON reading in recworld.io."""

from __future__ import annotations

from pathlib import Path

import pytest

from recworld.errors import DataError
from recworld.io import atomic_directory, atomic_write_text, read_json_object


def test_read_json_object_names_the_problem(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text('{"a": 1}', encoding="utf-8")
    assert read_json_object(good) == {"a": 1}

    bad = tmp_path / "bad.json"
    bad.write_text('{"a": 1,\n oops}', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.json:2: invalid JSON"):
        read_json_object(bad)

    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(DataError, match="expected a JSON object"):
        read_json_object(listed)

    with pytest.raises(DataError, match="no manifest here"):
        read_json_object(tmp_path / "absent.json", missing="no manifest here")


def test_atomic_directory_leaves_nothing_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "suite"
    with atomic_directory(target) as staging:
        atomic_write_text(staging / "a.txt", "first")
    with pytest.raises(RuntimeError), atomic_directory(target) as staging:
        atomic_write_text(staging / "a.txt", "second")
        raise RuntimeError("killed mid-build")
    assert (target / "a.txt").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite"]
