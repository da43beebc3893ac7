"""Reading a LUNAR folder's data back: every line validated, errors name the file and line.

The released dataset (``RUN/dataset/``: profiles, trajectories, records), the queries
and rubrics, and what every context setting answers from (:func:`load_eval_inputs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from recworld.errors import DataError
from recworld.io import read_models
from recworld.lunar.localtime import user_zones
from recworld.lunar.schemas import BehaviourRecord, EvalInputs, Profile, Query, Rubric, Trajectory, UserData

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


def records_by_user(records: Sequence[BehaviourRecord]) -> dict[str, list[BehaviourRecord]]:
    out: dict[str, list[BehaviourRecord]] = {}
    for r in records:
        out.setdefault(r.user_id, []).append(r)
    return out


def load_eval_inputs(root: Path, timezone: str | None = None) -> EvalInputs:
    """The (query, rubric) pairs of a LUNAR folder and each user's profile, records and local zone.

    ``timezone`` is the zone of users whose profile records none (:mod:`recworld.lunar.localtime`).
    """
    records_of = records_by_user(records(root))
    people = profiles(root)
    zones = user_zones(people, timezone)
    users = {p.user_id: UserData(p, tuple(records_of.get(p.user_id, ())), zones[p.user_id]) for p in people}
    rubric_of = {r.query_id: r for r in rubrics(root)}
    pairs = [(q, rubric_of[q.query_id]) for q in queries(root) if q.query_id in rubric_of]
    return EvalInputs(pairs=pairs, users=users)
