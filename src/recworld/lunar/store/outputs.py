"""The versioned records LUNAR's stages write besides the dataset itself; writer and reader share each class.

==========================  ======================================================  =========================
file                        record                                                  written by
==========================  ======================================================  =========================
manifest.json               :class:`SynthManifest` (manifest/4)                     ``synthesize``
real_stats.json             :class:`RealStats` (real_stats/2)                       ``synthesize``
failures.jsonl              :class:`~recworld.lunar.llm.FailureRecord`              ``synthesize``
queries_run.json            :class:`QueriesRun` (queries_run/2)                     ``make_queries``
query_failures.jsonl        :class:`~recworld.lunar.llm.FailureRecord`              ``make_queries``
eval/M/C/answers.jsonl      :class:`AnswerRecord` (answer/1)                        ``evaluate_contexts``
eval/M/C/judgments.jsonl    :class:`~recworld.lunar.judges.personalization.Judgment`  ``evaluate_contexts``
eval/M/C/privacy.jsonl      :class:`~recworld.lunar.judges.privacy.PrivacyJudgment`   ``evaluate_contexts``
eval/M/C/run.json           :class:`EvalRun` (eval/3)                               ``evaluate_contexts``
==========================  ======================================================  =========================

Each carries the config that made it, typed (:mod:`recworld.lunar.config`), so a
folder says how it was produced and reads back as the same config. Records an older
version wrote (manifest/2 and /3, queries_run/1, eval/2: flat session settings; real_stats/1)
are read and migrated on the way in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from recworld.lunar.config import LunarEvalConfig, QueriesConfig, SynthConfig, stored_eval_config
from recworld.lunar.llm import FailureRecord
from recworld.lunar.privacy.attack import RiskReport
from recworld.lunar.store.dataset import EARLIER_STEP
from recworld.records import Record


def _migrated(data: Any, old: str, new: str) -> Any:
    """``data`` with the older schema id ``old`` replaced by ``new`` (its config migrates itself)."""
    if isinstance(data, dict) and data.get("schema") == old:
        return {**data, "schema": new}
    return data


class LeakKind(Record):
    """One kind of anchor string in a release: how many the run had and what became of each copy."""

    strings: int = Field(ge=0)  # distinct anchor strings (or numbers, or real dates) of this kind
    redacted: int = Field(ge=0)  # occurrences replaced by a token in released text
    dropped: int = Field(ge=0)  # occurrences that left with a dropped record or field
    released: int = Field(ge=0)  # occurrences left in dataset/ after the gate (always 0 when written)


class PrivacyReport(Record):
    """What the privacy layer did (recworld.lunar.privacy): columns, the independent scan, the risks."""

    columns: dict[str, Any] = Field(default_factory=dict)  # kept / dropped / unknown_dropped, by column name
    findings: list[str] = Field(default_factory=list)  # the independent scanner's (where, kind; no value)
    risks: RiskReport | None = None
    published: bool = True
    why_not: str | None = None


class ReleaseReport(Record):
    """What the release gate did (recworld.lunar.synth.release), and where the data came from."""

    leak_scan: dict[str, LeakKind]
    # Fields not on the allowlist that were dropped, by kind.field (a schema field added later).
    not_allowlisted: dict[str, int] = Field(default_factory=dict)
    # Released texts in which a written date was moved with the timeline.
    texts_with_moved_dates: int = Field(ge=0, default=0)
    # Users by where their demographic record came from: "record" (the anchors have one) or
    # "none" (no record: the profile is expanded from their own records' summary). No
    # demographic is ever drawn from a public distribution ("drawn" would count them).
    demographics: dict[str, int] = Field(default_factory=dict)
    # Real records known to the day only (Amazon 2018, date-only exports): they anchor days, no slot.
    day_only_anchors: int = Field(ge=0, default=0)
    privacy: PrivacyReport | None = None


class StageCounts(Record):
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


class SynthManifest(Record):
    schema_id: Literal["recworld.lunar.manifest/4"] = Field(
        default="recworld.lunar.manifest/4", alias="schema"
    )
    config: SynthConfig
    counts: SynthCounts
    timings: dict[str, float]
    created_by: str = "recworld.lunar.synthesize"
    release: ReleaseReport | None = None  # None only in manifests written before the release gate

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        data = _migrated(data, "recworld.lunar.manifest/2", "recworld.lunar.manifest/3")
        return _migrated(data, "recworld.lunar.manifest/3", "recworld.lunar.manifest/4")

    @classmethod
    def of(cls, root: Path) -> SynthManifest:
        return cls.read(root / "manifest.json", missing=EARLIER_STEP)


class RealStats(Record):
    """Aggregated real distributions (behaviour type, hour, weekday) for the JSD figures.

    ``hour`` counts only the records whose time of day the source knows: ``hour_n`` of the
    ``n``; ``day_only`` records (Amazon 2018, date-only exports) are left out of it, and with
    none timed the hour figure has no reference (its JSD is not computed).
    """

    schema_id: Literal["recworld.lunar.real_stats/2"] = Field(
        default="recworld.lunar.real_stats/2", alias="schema"
    )
    n: int = Field(ge=0)
    type: dict[str, int]
    hour: dict[str, int]
    weekday: dict[str, int]
    hour_n: int | None = Field(default=None, ge=0)  # None in real_stats/1 (every record was counted)
    day_only: int = Field(default=0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        return _migrated(data, "recworld.lunar.real_stats/1", "recworld.lunar.real_stats/2")

    def counts(self) -> dict[str, dict[str, int]]:
        return {"type": self.type, "hour": self.hour, "weekday": self.weekday}

    @classmethod
    def of(cls, root: Path) -> RealStats:
        return cls.read(root / "real_stats.json", missing=EARLIER_STEP)


class QueriesCounts(StageCounts):
    queries: int
    dropped: int  # queries asked for but not written (query or generic answer failed)
    unsupported: int = 0  # of those, rubrics with no evidence or no points (recworld.lunar.evidence)


class QueriesRun(Record):
    schema_id: Literal["recworld.lunar.queries_run/2"] = Field(
        default="recworld.lunar.queries_run/2", alias="schema"
    )
    config: QueriesConfig
    counts: QueriesCounts

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        return _migrated(data, "recworld.lunar.queries_run/1", "recworld.lunar.queries_run/2")


class AnswerRecord(Record):
    """One answer under one context; ``answer`` is None exactly when ``error`` says why."""

    schema_id: Literal["recworld.lunar.answer/1"] = Field(default="recworld.lunar.answer/1", alias="schema")
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
    token_counter: str | None = None  # "tokenizer:SPEC", or "estimate:chars/4" when estimated
    # The context window the budget came from, and where that window came from.
    context_window: int | None = None
    context_window_source: str | None = None


class EvalCounts(StageCounts):
    queries: int
    answered: int
    answer_errors: int  # never judged, never in a mean; shown in the report
    judged: int
    judge_errors: int
    privacy_judged: int = 0  # answers with a privacy score (privacy.jsonl)
    privacy_errors: int = 0  # privacy judge gave up (failed answers are not counted here)


class EvalRun(Record):
    schema_id: Literal["recworld.lunar.eval/3"] = Field(default="recworld.lunar.eval/3", alias="schema")
    model: str
    judge: str
    context: str
    # The answering system prompt's name (LunarEvalConfig.assistant_prompt): plain, or discreet.
    assistant_prompt: str = "plain"
    config: LunarEvalConfig
    counts: EvalCounts
    failures: list[FailureRecord]

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        data = _migrated(data, "recworld.lunar.eval/2", "recworld.lunar.eval/3")
        if isinstance(data, dict) and "config" in data:
            data = {**data, "config": stored_eval_config(data["config"])}
        return data
