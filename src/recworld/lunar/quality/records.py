"""The quality records on disk: ``quality_ratings.jsonl``, ``quality_ratings_run.json``, ``agreement.json``.

Written by ``lunar rate`` and ``lunar agreement``, read back with the same classes by
the report (:mod:`recworld.lunar.report.validation`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from recworld.lunar.llm import FailureRecord
from recworld.lunar.store.outputs import StageCounts
from recworld.records import FrozenRecord, Record

Kind = Literal["plausibility", "profile", "query"]
RATINGS_FILE = "quality_ratings.jsonl"
RUN_FILE = "quality_ratings_run.json"
AGREEMENT_FILE = "agreement.json"


class QualityRating(Record):
    """A line of ``quality_ratings.jsonl``; ``scores`` is None exactly when ``error`` says why."""

    schema_id: Literal["recworld.lunar.quality_rating/1"] = Field(
        default="recworld.lunar.quality_rating/1", alias="schema"
    )
    kind: Kind
    subject: str  # user id (plausibility, profile) or query id
    scores: dict[str, int] | None
    error: str | None = None


class RatingSummary(Record):
    """Means per dimension and the paper's headline figures (the mean of each group's dimensions)."""

    dimensions: dict[str, float | None]  # dimension -> mean over rated pieces
    overall: dict[Kind, float | None]  # kind -> mean of the per-piece means of its dimensions
    rated: dict[Kind, int]
    errors: dict[Kind, int]


class QualityRatingsRun(Record):
    """``quality_ratings_run.json``: who rated, how much they saw, what failed, the summary."""

    schema_id: Literal["recworld.lunar.quality_ratings_run/1"] = Field(
        default="recworld.lunar.quality_ratings_run/1", alias="schema"
    )
    model: str
    max_records: int
    counts: StageCounts
    failures: list[FailureRecord]
    summary: RatingSummary

    @classmethod
    def of(cls, root: Path) -> QualityRatingsRun | None:
        path = root / RUN_FILE
        return cls.read(path) if path.exists() else None


class PairAgreement(FrozenRecord):
    """Agreement of two raters on one dimension (or pooled): the row of Tables 2 and 10."""

    dimension: str
    rater_a: str
    rater_b: str
    kind: str  # human-human, human-LLM or LLM-LLM
    n: int
    exact: float
    within_one: float
    ac1: float


class AgreementReport(Record):
    """``agreement.json``: which rating files were compared, which raters are LLMs, every pair's row."""

    schema_id: Literal["recworld.lunar.agreement/1"] = Field(
        default="recworld.lunar.agreement/1", alias="schema"
    )
    sources: list[str]
    llm_raters: list[str]
    rows: list[PairAgreement]

    @classmethod
    def of(cls, root: Path) -> AgreementReport | None:
        path = root / AGREEMENT_FILE
        return cls.read(path) if path.exists() else None
