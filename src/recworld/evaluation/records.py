"""The run header, ``run.json``: what was run, with which settings, how far it got, and why it stopped.

The evaluation writes it and the report reads it, both through :class:`RunHeader`.
Its ``config`` is the typed :class:`~recworld.evaluation.config.EvalConfig`, so a
run's settings read back as they were given; ``settings`` and ``label`` name the
ones that differ from the defaults, the run's identity beyond its folder name.
Older versions are migrated on read (:mod:`recworld.evaluation.migrate`).
Samples and metrics records live in :mod:`recworld.scoring.records`, below this
package, because scoring reads them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    Field,
    JsonValue,
    SerializeAsAny,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from recworld.errors import ConfigError, RecWorldError, from_validation
from recworld.evaluation.config import NAMED, EvalConfig, settings_label
from recworld.evaluation.migrate import LEGACY_SCHEMAS, migrate_header
from recworld.io import read_json_object
from recworld.models.backend import Backend
from recworld.records import Record
from recworld.runner import RunnerStats
from recworld.scoring.records import MetricsRecord, SampleRecord

RUN_SCHEMA: Literal["recworld.run/3"] = "recworld.run/3"
RUN_KIND = "eval-run"  # the output marker kind of a run folder (recworld.io.claim_output_dir)

RunStatus = Literal["running", "finished", "stopped", "too_many_errors", "interrupted"]

__all__ = [
    "RUN_KIND",
    "RUN_SCHEMA",
    "EvalResult",
    "RunCounts",
    "RunHeader",
    "RunStatus",
    "read_run_header",
    "recorded_backend",
]


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


class RunHeader(Record):
    """``run.json``. ``status`` says whether the numbers beside it can be read as a result.

    ``stopped``: a fatal failure (bad key, no such model, unreachable server)
    ended the run; ``too_many_errors``: more samples failed than
    ``fail_on_error`` allows; ``interrupted``: Ctrl-C, with what was done
    written. ``reason`` names the cause in each case.
    """

    schema_id: Literal["recworld.run/3"] = Field(default=RUN_SCHEMA, alias="schema")
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
    # The settings as given, typed (a subclass of EvalConfig writes its own fields too).
    config: SerializeAsAny[EvalConfig]
    # The identity settings that differ from the defaults, by key, and the same as one line.
    settings: dict[str, JsonValue] = Field(default_factory=dict)
    label: str = ""
    # A model object's identity (recworld.evaluate(model=obj)); None for a spec.
    model_identity: dict[str, str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """An older header in today's shape, its settings named from its config."""
        if not isinstance(data, dict) or data.get("schema") not in LEGACY_SCHEMAS:
            return data
        migrated = migrate_header(data)
        try:
            differing = EvalConfig.model_validate(migrated["config"]).differing()
        except (ValidationError, RecWorldError):
            return migrated  # the header's own validation names the bad field
        migrated["settings"], migrated["label"] = differing, settings_label(differing)
        return migrated

    @field_validator("config", mode="before")
    @classmethod
    def _config_class(cls, value: Any, info: ValidationInfo) -> Any:
        """Read the config as the class the caller runs with (``context={"config": EvalConfig subclass}``)."""
        kind = (info.context or {}).get("config")
        if kind is not None and isinstance(value, dict):
            return kind.model_validate(value)
        return value

    def identity(self) -> dict[str, Any]:
        """What must match for a rerun into this run's folder to be a resume, by key."""
        out: dict[str, Any] = {
            "model": self.model,
            "mode": self.mode,
            "variant": self.variant,
            "suite": self.suite,
            "suite_fingerprint": self.suite_fingerprint,
        }
        out.update({k: v for k, v in self.config.identity().items() if k not in NAMED or k == "orders"})
        if self.model_identity is not None:
            out["model_identity"] = self.model_identity
        return out


def read_run_header(path: Path, config: type[EvalConfig] = EvalConfig) -> RunHeader:
    """Read ``run.json`` (any version); a malformed one is a :class:`DataError` naming file and field."""
    try:
        return RunHeader.model_validate(read_json_object(path), context={"config": config})
    except ValidationError as exc:
        raise from_validation(exc, path=path) from None


@dataclass(frozen=True)
class EvalResult:
    """What an evaluation returns: its folder and its typed records (run header, metrics)."""

    run_dir: Path
    header: RunHeader
    metrics: MetricsRecord

    @property
    def status(self) -> RunStatus:
        return self.header.status

    def samples(self) -> list[SampleRecord]:
        """The run's samples, typed (read from ``samples.jsonl`` on each call)."""
        from recworld.scoring import load_samples

        return load_samples(self.run_dir / "samples.jsonl")

    def score(self, measure: str) -> float | None:
        """The score of one measure (None: no scored sample)."""
        return self.metrics.measures[measure].score


def recorded_backend(model: str) -> Backend | None:
    """The backend row a recorded run's model names, for its load-free facts; None when unknown.

    What ``eval``'s table (``sends_requests``) and the report (``ceiling``) read. None
    when no installed backend has that name: a model object's, a removed plugin's.
    """
    from recworld.models.registry import backend_of

    try:
        return backend_of(model)
    except ConfigError:
        return None
