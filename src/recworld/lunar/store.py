"""Reading a LUNAR folder back: every line validated, errors name the file and line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from recworld.errors import DataError
from recworld.io import read_json_object
from recworld.lunar.schemas import BehaviourRecord, Profile, Query, Rubric, Trajectory

M = TypeVar("M", bound=BaseModel)


def read_jsonl(path: Path, model: type[M]) -> list[M]:
    if not path.exists():
        raise DataError("missing file (run the earlier lunar step first)", path=path)
    return list(_iter(path, model))


def _iter(path: Path, model: type[M]) -> Iterator[M]:
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield model.model_validate(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON: {exc.msg}", path=path, line=n) from exc
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"])
                raise DataError(first["msg"], path=path, line=n, field=where or None) from exc


def read_json(path: Path) -> dict[str, Any]:
    return read_json_object(path)


def profiles(root: Path) -> list[Profile]:
    return read_jsonl(root / "profiles.jsonl", Profile)


def trajectories(root: Path) -> list[Trajectory]:
    return read_jsonl(root / "trajectories.jsonl", Trajectory)


def records(root: Path) -> list[BehaviourRecord]:
    return read_jsonl(root / "records.jsonl", BehaviourRecord)


def queries(root: Path) -> list[Query]:
    return read_jsonl(root / "queries.jsonl", Query)


def rubrics(root: Path) -> list[Rubric]:
    return read_jsonl(root / "rubrics.jsonl", Rubric)


def slug(spec: str) -> str:
    """A folder name for a model spec (``llamacpp:/x/m.gguf`` → ``llamacpp_x_m.gguf``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_") or "model"
