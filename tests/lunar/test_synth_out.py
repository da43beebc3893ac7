"""``lunar synth --out`` writes only into a new or empty folder, or a LUNAR run it wrote before."""

from __future__ import annotations

from pathlib import Path

import pytest

from recworld import lunar
from recworld.errors import ConfigError
from recworld.io import output_kind
from recworld.lunar.api import RUN_KIND, claim_run_dir


def test_a_foreign_folder_is_refused_before_anything_is_read_or_written(tmp_path: Path) -> None:
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "holiday.jpg").write_bytes(b"not mine to touch")
    config = lunar.SynthConfig(
        anchors=str(tmp_path / "no-such-anchors"),  # never read: the folder check comes first
        out_dir=foreign,
        llm=lunar.SessionConfig(model="scripted"),
    )
    with pytest.raises(ConfigError, match="not written by recworld"):
        lunar.synthesize(config)
    assert [p.name for p in foreign.iterdir()] == ["holiday.jpg"]


def test_new_empty_and_earlier_runs_are_accepted(tmp_path: Path) -> None:
    claim_run_dir(tmp_path / "new")
    (tmp_path / "empty").mkdir()
    claim_run_dir(tmp_path / "empty")
    claim_run_dir(tmp_path / "new")  # an unfinished synth resumes on its claim
    assert output_kind(tmp_path / "new") is None and RUN_KIND == "lunar-run"  # not marked: not finished
    older = tmp_path / "older"  # file names never make a folder a run: only the marker does
    (older / "dataset").mkdir(parents=True)
    (older / "dataset" / "profiles.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"not written by recworld.*--force"):
        claim_run_dir(older)
    claim_run_dir(older, force=True)
