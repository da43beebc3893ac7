"""Atomic outputs, the journal and JSON reading in recworld.io."""

from __future__ import annotations

from pathlib import Path

import pytest

from recworld.errors import ConfigError, DataError
from recworld.io import (
    atomic_directory,
    atomic_write_text,
    claim_output_dir,
    output_directory,
    output_kind,
    read_json_object,
)


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


# --- outputs a command may replace -----------------------------------------------------------------


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_claim_allows_new_empty_and_own_directories(tmp_path: Path) -> None:
    assert claim_output_dir(tmp_path / "new", "suite") == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    claim_output_dir(tmp_path / "empty", "suite")
    with output_directory(tmp_path / "own", "suite") as staging:
        atomic_write_text(staging / "a.txt", "x")
    assert output_kind(tmp_path / "own") == "suite"
    claim_output_dir(tmp_path / "own", "suite")


def test_claim_refuses_foreign_and_other_kinds_unless_forced(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match=r"not written by recworld.*--force"):
        claim_output_dir(foreign, "suite")
    claim_output_dir(foreign, "suite", force=True)
    with output_directory(tmp_path / "other", "described-dataset"):
        pass
    with pytest.raises(ConfigError, match="holds a 'described-dataset' output"):
        claim_output_dir(tmp_path / "other", "suite")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="not a directory"):
        claim_output_dir(tmp_path / "file", "suite", force=True)
    (tmp_path / "link").symlink_to(foreign)
    with pytest.raises(ConfigError, match="symbolic link"):
        claim_output_dir(tmp_path / "link", "suite", force=True)


def test_output_directory_keeps_what_it_does_not_write(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with output_directory(out, "suite") as staging:
        atomic_write_text(staging / "owned.txt", "v1")
    (out / "runs" / "a").mkdir(parents=True)
    (out / "runs" / "a" / "samples.jsonl").write_bytes(b'{"x": 1}\n')
    (out / "notes.txt").write_text("mine")
    before = {k: v for k, v in tree(out).items() if k.startswith(("runs", "notes"))}
    with output_directory(out, "suite") as staging:
        atomic_write_text(staging / "owned.txt", "v2")
    after = tree(out)
    assert after["owned.txt"] == b"v2"
    assert {k: after[k] for k in before} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    with pytest.raises(RuntimeError), output_directory(out, "suite") as staging:
        atomic_write_text(staging / "owned.txt", "v3")
        raise RuntimeError("killed mid-build")
    assert tree(out) == after
