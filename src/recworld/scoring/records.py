"""The records scoring reads and writes: one sample per question, and a run's metrics.

They live here, below :mod:`recworld.evaluation`, because scoring must read
them without importing the layer that writes them. The evaluation writes with
these classes and every reader (scoring, report) validates with them, so a
field can only change in one place, with a new schema version.

``recworld.sample/2`` differs from ``/1`` in one rule: a sample whose request
failed (``error`` set) is not scored, so its ``correct`` and ``missed`` are
null. ``/1`` records still read: an errored ``/1`` sample is unscored too.

Every record here is produced as its class (:func:`recworld.scoring.score_samples`
builds :class:`MeasureMetrics` and :class:`GroupMetrics` directly) and read as
its class (the report never indexes a dict), so a renamed field fails the type
check where it is used. ``SampleRecord.prompt`` holds the chat messages
themselves (:class:`recworld.chat.Message`, validated field by field), written
as before: ``images`` only when there are any.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_serializer, field_validator

from recworld.chat import Message
from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.lrworld.schema import QuestionFormat
from recworld.records import FrozenRecord
from recworld.scoring.thresholds import MIN_PAIRED_N, SIGNIFICANCE

SAMPLE_SCHEMA: Literal["recworld.sample/2"] = "recworld.sample/2"
METRICS_SCHEMA: Literal["recworld.metrics/3"] = "recworld.metrics/3"
PAIRED_SCHEMA: Literal["recworld.paired/2"] = "recworld.paired/2"

__all__ = [
    "METRICS_SCHEMA",
    "PAIRED_SCHEMA",
    "SAMPLE_SCHEMA",
    "GroupMetrics",
    "MeasureMetrics",
    "MetricsRecord",
    "PairedDifference",
    "PairedMeasure",
    "PairedRecord",
    "PositionBias",
    "PositionCounts",
    "RankingMetrics",
    "SampleRecord",
    "SampleUsage",
]


class SampleUsage(FrozenRecord):
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)


class SampleRecord(FrozenRecord):
    """One question put to one model: a line of ``samples.jsonl``."""

    schema_id: Literal["recworld.sample/1", "recworld.sample/2"] = Field(
        default=SAMPLE_SCHEMA, alias="schema"
    )
    question_id: str
    measure: str
    dataset: str = ""
    format: QuestionFormat
    model: str | None = None
    mode: str | None = None
    variant: str | None = None
    prompt: tuple[Message, ...] = ()
    labels: tuple[str, ...]
    answer_index: int
    response: str | None = None
    # A label the backend could not score (-inf) is null, which keeps the file strict JSON.
    choice_logprobs: list[float | None] | None = None
    parsed_index: int | None
    # Why the request failed after its retries; such a sample is not scored.
    error: str | None = None
    correct: bool | None = None
    missed: bool | None = None
    latency_s: float = 0.0
    usage: SampleUsage | None = None
    cache_hit: bool = False
    attempts: int = 0
    # Which seeded option order this is (--orders N: 0..N-1; 0 is the suite's own order).
    order: int = Field(default=0, ge=0)
    # The candidates' ids in the order shown: analyses (popularity, case study) join on them.
    option_ids: tuple[str, ...] | None = None
    # --mode rank: option indices best first. tie (rank and loglik): the top score was shared; rank
    # counts it a miss, loglik draws the pick among the tied options with the seed (never "A").
    ranking: tuple[int, ...] | None = None
    tie: bool | None = None

    @field_serializer("prompt")
    def _prompt_json(self, prompt: tuple[Message, ...]) -> list[dict[str, Any]]:
        return [m.to_json() for m in prompt]

    # Field validators (not one model validator) so an error names its field.
    @field_validator("measure")
    @classmethod
    def _known_measure(cls, value: str) -> str:
        if value not in MEASURES_BY_ID:
            raise ValueError(f"unknown measure {value!r}")
        return value

    @field_validator("labels")
    @classmethod
    def _label_count(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        fmt = info.data.get("format")
        if isinstance(fmt, QuestionFormat) and len(value) != fmt.n_options:
            raise ValueError(f"{fmt.value} needs {fmt.n_options} labels, got {len(value)}")
        return value

    @field_validator("answer_index", "parsed_index")
    @classmethod
    def _option_index(cls, value: int | None, info: ValidationInfo) -> int | None:
        labels = info.data.get("labels")
        if value is not None and labels is not None and not 0 <= value < len(labels):
            raise ValueError(f"{value} is not an option index")
        return value

    @field_validator("correct")
    @classmethod
    def _correct_agrees(cls, value: bool | None, info: ValidationInfo) -> bool | None:
        data = info.data
        if value is None or data.get("error") is not None or "answer_index" not in data:
            return value
        parsed, answer = data.get("parsed_index"), data["answer_index"]
        hit = parsed is not None and parsed == answer
        if value != hit:
            raise ValueError(f"is {value} but parsed_index {parsed} vs answer_index {answer} says {hit}")
        return value

    @property
    def base_id(self) -> str:
        """The suite question this sample asked, whatever option order it was asked in."""
        return self.question_id.split("#o", 1)[0]

    @property
    def scored(self) -> bool:
        """False for a sample whose request failed: it is counted as an error, never as wrong."""
        return self.error is None

    @property
    def hit(self) -> bool:
        return self.parsed_index is not None and self.parsed_index == self.answer_index


class PositionBias(FrozenRecord):
    labels: list[str]
    gold: list[int]
    parsed: list[int]
    hits: list[int]
    n: int
    n_parsed: int
    top_label: str | None
    top_share: float | None
    tv_distance: float | None
    # Answers concentrate on one position (thresholds.DEGENERATE_TV and DEGENERATE_P): the score
    # reflects where the answers happen to sit, not what the model knows.
    degenerate: bool = False


class PositionCounts(FrozenRecord):
    """Per option position: correct answers there, parsed answers there, and hits there."""

    gold: list[int]
    parsed: list[int]
    hits: list[int]


class MeasureMetrics(FrozenRecord):
    """One measure of one run; ``n`` counts scored samples, ``errors`` the failed ones.

    ``questions`` counts the distinct suite questions behind them: ``n`` when
    each was asked once, ``n / orders`` for a run asked in several option
    orders. Intervals are over questions (see :mod:`recworld.scoring.metrics`).
    """

    n: int
    questions: int = 0
    errors: int
    correct: int
    score: float | None
    ci_low: float | None
    ci_high: float | None
    missed: int
    missed_rate: float | None
    missed_ci: tuple[float | None, float | None]
    chance: float
    format: str
    scale: str
    factor: str
    labels: list[str]
    positions: PositionCounts
    position_bias: PositionBias
    # Scored samples whose best score several options shared (loglik: drawn among them with the seed;
    # rank: a miss). 0 in generate mode.
    ties: int = 0


class GroupMetrics(FrozenRecord):
    """A macro average over measures (a factor, a scale, or all); ``score`` is null when none scored."""

    measures: list[str]
    n: int
    errors: int
    score: float | None
    ci_low: float | None
    ci_high: float | None
    missed_rate: float | None
    missed_ci: tuple[float | None, float | None]
    chance: float
    scale: str | None = None


class RankingMetrics(FrozenRecord):
    """One measure of a ``--mode rank`` run; ``ties`` counts samples whose top score was shared."""

    n: int
    hr_at_1: float
    hr_at_3: float
    ndcg_at_10: float
    ties: int


class MetricsRecord(FrozenRecord):
    """``metrics.json``: what :func:`recworld.scoring.score_samples` computes from a run's samples.

    ``status`` is ``errored`` when no sample could be scored: such a run has no
    score at all, rather than a score of zero.
    """

    # /2 files (percentile bootstrap intervals) still read; their intervals are the old ones.
    schema_id: Literal["recworld.metrics/2", "recworld.metrics/3"] = Field(
        default=METRICS_SCHEMA, alias="schema"
    )
    status: Literal["ok", "errored"]
    seed: int
    n_resamples: int
    confidence: float
    interval: str
    model: str | None
    mode: str | None
    variant: str | None
    dataset: str | None
    n: int
    correct: int
    missed: int
    errors: int
    measures: dict[str, MeasureMetrics]
    factors: dict[str, GroupMetrics]
    scales: dict[str, GroupMetrics]
    overall: GroupMetrics | None
    positions: dict[str, PositionBias]
    # --mode rank only: HR@1, HR@3 and NDCG@10 per measure over the full candidate ranking.
    ranking: dict[str, RankingMetrics] = Field(default_factory=dict)


class PairedMeasure(FrozenRecord):
    """A - B on one measure's shared questions: the difference, its interval and the paired test.

    ``wins_a`` counts the questions only A answered right, ``wins_b`` those only
    B did (the discordant pairs); ``p_value`` is the exact McNemar test on them.
    The interval is a smoothed paired bootstrap over the shared questions.
    """

    n: int
    score_a: float
    score_b: float
    diff: float
    ci_low: float | None
    ci_high: float | None
    wins_a: int = 0
    wins_b: int = 0
    p_value: float | None = None

    @property
    def tested(self) -> bool:
        """Enough shared questions (:data:`MIN_PAIRED_N`) for the test to be read."""
        return self.n >= MIN_PAIRED_N and self.p_value is not None

    @property
    def significant(self) -> bool:
        """The paired test rejects "no difference" at :data:`SIGNIFICANCE`, on enough questions."""
        return self.tested and self.p_value is not None and self.p_value < SIGNIFICANCE


class PairedDifference(FrozenRecord):
    """The macro-average difference over measures, with its interval and a stratified sign-flip test.

    ``n_min`` is the smallest number of shared questions of any measure in it:
    the test is read only when every measure has :data:`MIN_PAIRED_N`.
    """

    diff: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None = None
    n_min: int = 0

    @property
    def tested(self) -> bool:
        return self.n_min >= MIN_PAIRED_N and self.p_value is not None

    @property
    def significant(self) -> bool:
        return self.tested and self.p_value is not None and self.p_value < SIGNIFICANCE


class PairedRecord(FrozenRecord):
    """``recworld.paired/2``: what :func:`recworld.scoring.paired_comparison` computes for two runs."""

    schema_id: Literal["recworld.paired/2"] = Field(default=PAIRED_SCHEMA, alias="schema")
    n_common: int
    only_a: int
    only_b: int
    measures: dict[str, PairedMeasure]
    overall: PairedDifference
