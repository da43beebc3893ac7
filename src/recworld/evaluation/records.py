"""The run header, ``run.json``: what was run, how far it got, and why it stopped.

The evaluation writes it and the report reads it, both through :class:`RunHeader`.
Samples and metrics records live in :mod:`recworld.scoring.records`, below
this package, because scoring reads them too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from recworld.errors import from_validation
from recworld.io import read_json_object
from recworld.records import Record
from recworld.runner import RunnerStats

RUN_SCHEMA: Literal["recworld.run/2"] = "recworld.run/2"
# What must match for a rerun into an existing run directory to be a resume.
RUN_IDENTITY = ("model", "mode", "variant", "suite", "suite_fingerprint")

RunStatus = Literal["running", "finished", "stopped", "too_many_errors"]

__all__ = ["RUN_IDENTITY", "RUN_SCHEMA", "RunCounts", "RunHeader", "RunStatus", "read_run_header"]


class RunCounts(Record):
    """Sample counts over the whole run; ``runner`` covers the last invocation only.

    ``recworld.run/1`` headers spelt the runner's counters as flat ``runner_*``
    keys (``runner_sent``, ...); they are moved into ``runner`` when read
    (:meth:`_migrate`), and any other unknown key is an error, never dropped.
    """

    questions: int = 0
    answered: int = 0
    errors: int = 0
    missed: int = 0
    resumed: int = 0
    runner: RunnerStats = Field(default_factory=RunnerStats)

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not any(str(k).startswith("runner_") for k in data):
            return data
        flat = {k: v for k, v in data.items() if not str(k).startswith("runner_")}
        moved = {str(k).removeprefix("runner_"): v for k, v in data.items() if str(k).startswith("runner_")}
        return {**flat, "runner": {**moved, **dict(flat.get("runner") or {})}}


class RunHeader(BaseModel):
    """``run.json``. ``status`` says whether the numbers beside it can be read as a result.

    ``stopped``: a fatal failure (bad key, no such model, unreachable server)
    ended the run; ``too_many_errors``: more samples failed than
    ``fail_on_error`` allows. ``reason`` names the cause in both cases.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_id: Literal["recworld.run/1", "recworld.run/2"] = Field(default=RUN_SCHEMA, alias="schema")
    model: str
    mode: str
    variant: str
    suite: str
    suite_fingerprint: str | None = None
    dataset: str | None = None
    measures: list[str] = Field(default_factory=list)
    limit: int | None = None
    started: int | str | None = None
    finished: int | str | None = None
    status: RunStatus = "finished"
    reason: str | None = None
    counts: RunCounts = Field(default_factory=RunCounts)
    config: dict[str, Any] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def identity(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in RUN_IDENTITY}


def read_run_header(path: Path) -> RunHeader:
    """Read ``run.json``; a malformed one is one :class:`DataError` naming the file and field."""
    try:
        return RunHeader.model_validate(read_json_object(path))
    except ValidationError as exc:
        raise from_validation(exc, path=path) from None
