"""Reading a LUNAR folder back: every line validated, errors name the file and line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from recworld.errors import DataError
from recworld.io import read_models
from recworld.lunar.outputs import RealStats, SynthManifest, read_record
from recworld.lunar.schemas import BehaviourRecord, Profile, Query, Rubric, Trajectory

M = TypeVar("M", bound=BaseModel)
DATASET_DIR = "dataset"  # the released folder inside a run (recworld.lunar.synth.release)
EARLIER_STEP = "missing file (run the earlier lunar step first)"


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    if not path.exists():
        raise DataError(EARLIER_STEP, path=path)
    return read_models(path, model)


def dataset_dir(root: Path) -> Path:
    """Where a run's released profiles, trajectories and records live: ``RUN/dataset/``.

    A folder written before the release split (the three files directly in ``RUN/``)
    is still read from ``RUN/``.
    """
    release = root / DATASET_DIR
    if release.is_dir() or not (root / "records.jsonl").exists():
        return release
    return root


def profiles(root: Path) -> list[Profile]:
    return read_jsonl(dataset_dir(root) / "profiles.jsonl", Profile)


def trajectories(root: Path) -> list[Trajectory]:
    return read_jsonl(dataset_dir(root) / "trajectories.jsonl", Trajectory)


def records(root: Path) -> list[BehaviourRecord]:
    return read_jsonl(dataset_dir(root) / "records.jsonl", BehaviourRecord)


def queries(root: Path) -> list[Query]:
    return read_jsonl(root / "queries.jsonl", Query)


def rubrics(root: Path) -> list[Rubric]:
    return read_jsonl(root / "rubrics.jsonl", Rubric)


def manifest(root: Path) -> SynthManifest:
    return read_record(root / "manifest.json", SynthManifest, missing=EARLIER_STEP)


def real_stats(root: Path) -> RealStats:
    return read_record(root / "real_stats.json", RealStats, missing=EARLIER_STEP)


def slug(spec: str) -> str:
    """A folder name for a model spec (``llamacpp:/x/m.gguf`` → ``llamacpp_x_m.gguf``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_") or "model"
