"""The versioned records LUNAR's stages write besides the dataset itself; writer and reader share each class.

==========================  ===========================================  =========================
file                        record                                       written by
==========================  ===========================================  =========================
manifest.json               :class:`SynthManifest` (manifest/2)          ``synthesize``
real_stats.json             :class:`RealStats` (real_stats/1)            ``synthesize``
failures.jsonl              :class:`~recworld.lunar.llm.FailureRecord`   ``synthesize``
queries_run.json            :class:`QueriesRun` (queries_run/1)          ``make_queries``
query_failures.jsonl        :class:`~recworld.lunar.llm.FailureRecord`   ``make_queries``
eval/M/C/answers.jsonl      :class:`AnswerRecord` (answer/1)             ``evaluate``
eval/M/C/judgments.jsonl    :class:`~recworld.lunar.judge.Judgment`      ``evaluate``
eval/M/C/privacy.jsonl      :class:`~recworld.lunar.privacy.PrivacyJudgment`  ``evaluate``
eval/M/C/run.json           :class:`EvalRun` (eval/2)                    ``evaluate``
==========================  ===========================================  =========================

Each carries the config that made it, so a folder says how it was produced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recworld.errors import from_validation
from recworld.io import atomic_write_json, read_json_object
from recworld.lunar.config import LunarEvalConfig, QueriesConfig, SynthConfig
from recworld.lunar.llm import FailureRecord


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        """The record as written to disk (``schema`` key, not ``schema_``)."""
        return self.model_dump(mode="json", by_alias=True)


R = TypeVar("R", bound=_Record)


def read_record(path: Path, model: type[R], *, missing: str = "missing file") -> R:
    """One JSON-object file validated as ``model``; errors name the file and field."""
    try:
        return model.model_validate(read_json_object(path, missing=missing))
    except ValidationError as exc:
        raise from_validation(exc, path=path) from None


def write_record(path: Path, record: _Record) -> None:
    atomic_write_json(path, record.to_json())


class StageCounts(_Record):
    """The failure-policy figures every stage reports."""

    asked: int = Field(ge=0)  # pieces asked of the model (one structured or text call each)
    failures: int = Field(ge=0)  # pieces given up on (request failed after retries, or reply invalid)
    llm_calls: int = Field(ge=0)  # requests handed to the runner, attempts and cache hits included

    @property
    def error_fraction(self) -> float:
        return self.failures / self.asked if self.asked else 0.0


class SynthCounts(StageCounts):
    users: int
    dropped_users: int
    weeks: int
    slots: int
    records: int
    anchors_used: int


class SynthManifest(_Record):
    schema_: Literal["recworld.lunar.manifest/2"] = Field(default="recworld.lunar.manifest/2", alias="schema")
    config: SynthConfig
    counts: SynthCounts
    timings: dict[str, float]
    created_by: str = "recworld.lunar.synthesize"


class RealStats(_Record):
    """Aggregated real distributions (behaviour type, hour, weekday) for the JSD figures."""

    schema_: Literal["recworld.lunar.real_stats/1"] = Field(
        default="recworld.lunar.real_stats/1", alias="schema"
    )
    n: int = Field(ge=0)
    type: dict[str, int]
    hour: dict[str, int]
    weekday: dict[str, int]

    def counts(self) -> dict[str, dict[str, int]]:
        return {"type": self.type, "hour": self.hour, "weekday": self.weekday}


class QueriesCounts(StageCounts):
    queries: int
    dropped: int  # queries asked for but not written (query or generic answer failed)
    unsupported: int = 0  # of those, rubrics with no evidence or no points (recworld.lunar.evidence)


class QueriesRun(_Record):
    schema_: Literal["recworld.lunar.queries_run/1"] = Field(
        default="recworld.lunar.queries_run/1", alias="schema"
    )
    config: QueriesConfig
    counts: QueriesCounts


class AnswerRecord(_Record):
    """One answer under one context; ``answer`` is None exactly when ``error`` says why."""

    schema_: Literal["recworld.lunar.answer/1"] = Field(default="recworld.lunar.answer/1", alias="schema")
    query_id: str
    model: str
    context: str
    prompt_chars: int = Field(ge=0)
    answer: str | None
    error: str | None
    # Full context only: records shown of the user's total, the token budget and who counted it.
    context_shown: int | None = None
    context_total: int | None = None
    context_budget_tokens: int | None = None
    token_counter: str | None = None


class EvalCounts(StageCounts):
    queries: int
    answered: int
    answer_errors: int  # never judged, never in a mean; shown in the report
    judged: int
    judge_errors: int
    privacy_judged: int = 0  # answers with a privacy score (privacy.jsonl)
    privacy_errors: int = 0  # privacy judge gave up (failed answers are not counted here)


class EvalRun(_Record):
    schema_: Literal["recworld.lunar.eval/2"] = Field(default="recworld.lunar.eval/2", alias="schema")
    model: str
    judge: str
    context: str
    config: LunarEvalConfig
    counts: EvalCounts
    failures: list[FailureRecord]
