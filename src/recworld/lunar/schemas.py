"""LUNAR's versioned records: what the synthesis writes and the evaluation reads.

Every persisted record carries a ``schema`` id (``recworld.lunar.<kind>/1``)
and forbids unknown fields, so a file written by another version fails loudly
instead of being half-read. Bump the version on any field change.

The 13 tier-1 interest categories double as behaviour domains: a profile's
affinity for ``hotel`` and a ``hotel`` booking record speak the same vocabulary,
which is what lets queries, evidence and statistics line up across stages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, tzinfo
from enum import StrEnum
from typing import Literal

from pydantic import Field, field_validator, model_validator

from recworld.lunar.localtime import stamp
from recworld.records import Record


class Category(StrEnum):
    """The 13 tier-1 interest categories (also the behaviour domains)."""

    DINING = "dining"
    FOOD_DELIVERY = "food_delivery"
    GROCERIES = "groceries"
    SHOPPING = "shopping"
    AIR_TRAVEL = "air_travel"
    RAIL_TRAVEL = "rail_travel"
    HOTEL = "hotel"
    LOCAL_TRANSPORT = "local_transport"
    MOVIES = "movies"
    MUSIC = "music"
    FITNESS = "fitness"
    FINANCE = "finance"
    JOB_SEEKING = "job_seeking"


CATEGORIES: tuple[Category, ...] = tuple(Category)


class BehaviourType(StrEnum):
    """A closed vocabulary of actions, so frequency vectors and JSDs compare like with like."""

    SEARCH = "search"
    BROWSE = "browse"
    ORDER = "order"
    BOOK = "book"
    PURCHASE = "purchase"
    PAY = "pay"
    CANCEL = "cancel"
    REVIEW = "review"
    WATCH = "watch"
    LISTEN = "listen"
    VISIT = "visit"
    RIDE = "ride"
    CHECK_IN = "check_in"
    WORKOUT = "workout"
    APPLY = "apply"
    TRANSFER = "transfer"


class Provenance(StrEnum):
    SYNTHETIC = "synthetic"
    ANCHOR = "anchor"


FieldValue = str | int | float | bool
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def hhmm_minutes(value: str) -> int:
    """Minutes since midnight of an ``HH:MM`` string (validated)."""
    if not _HHMM.match(value):
        raise ValueError(f"time {value!r} is not HH:MM")
    return int(value[:2]) * 60 + int(value[3:])


# -- anchors and profiles --------------------------------------------------------------------


class Demographic(Record):
    """A user's demographic record: the foundation anchor of a profile.

    Anchors carry the real record (exact ``age``, ``location``, ``extra`` columns); a
    released profile carries only the coarse allowlist (``age_band``, ``gender``,
    ``occupation``, ``region``, ``timezone``: :func:`recworld.lunar.deid.released_demographic`).
    Version 2 added ``age_band`` and ``region``; version 1 records read as they are.
    """

    schema_id: Literal["recworld.lunar.demographic/2", "recworld.lunar.demographic/1"] = Field(
        default="recworld.lunar.demographic/2", alias="schema"
    )
    user_id: str
    age: int | None = None
    age_band: str | None = None
    gender: str | None = None
    occupation: str | None = None
    location: str | None = None
    region: str | None = None
    extra: dict[str, str] = Field(default_factory=dict)
    # IANA zone of the user's local time (hours, weekdays). Released profiles always carry one
    # (the anchor's, else --timezone, else UTC); None only in records written before that.
    timezone: str | None = None

    def describe(self) -> str:
        parts = [
            f"age {self.age}" if self.age is not None else "",
            f"age {self.age_band}" if self.age is None and self.age_band else "",
            f"gender {self.gender}" if self.gender else "",
            f"occupation {self.occupation}" if self.occupation else "",
            f"location {self.location}" if self.location else "",
            f"region {self.region}" if self.location is None and self.region else "",
        ]
        parts += [f"{k} {v}" for k, v in sorted(self.extra.items())]
        return ", ".join(p for p in parts if p) or "unknown"


class Affinity(Record):
    category: Category
    score: float = Field(ge=0.0, le=1.0)
    preferences: list[str] = Field(min_length=1, max_length=8)


class Lifestyle(Record):
    clothing: str
    food: str
    housing: str
    mobility: str
    spending: str


class Profile(Record):
    schema_id: Literal["recworld.lunar.profile/1"] = Field(default="recworld.lunar.profile/1", alias="schema")
    user_id: str
    demographic: Demographic
    affinities: list[Affinity] = Field(min_length=1, max_length=len(CATEGORIES))
    lifestyle: Lifestyle

    @field_validator("affinities")
    @classmethod
    def _unique_categories(cls, value: list[Affinity]) -> list[Affinity]:
        seen = [a.category for a in value]
        if len(set(seen)) != len(seen):
            raise ValueError("each category may appear once")
        return value

    def zone_name(self) -> str | None:
        """The IANA zone this profile records for its user (``demographic.timezone``), or None."""
        name = self.demographic.timezone
        return name.strip() if name and name.strip() else None

    def describe(self) -> str:
        lines = [f"Demographics: {self.demographic.describe()}"]
        for a in sorted(self.affinities, key=lambda a: -a.score):
            lines.append(f"- {a.category.value} (affinity {a.score:.2f}): {', '.join(a.preferences)}")
        ls = self.lifestyle
        lines.append(
            f"Lifestyle: clothing: {ls.clothing}; food: {ls.food}; housing: {ls.housing}; "
            f"mobility: {ls.mobility}; spending: {ls.spending}"
        )
        return "\n".join(lines)


# -- trajectories ----------------------------------------------------------------------------


class Scene(Record):
    """A 5W1H scene description of one time slot."""

    who: str
    what: str
    when: str
    where: str
    why: str
    how: str


class SlotPlan(Record):
    start: str
    end: str
    scene: Scene
    expected: list[BehaviourType] = Field(min_length=1, max_length=4)
    domains: list[Category] = Field(min_length=1, max_length=3)

    @model_validator(mode="after")
    def _window(self) -> SlotPlan:
        if hhmm_minutes(self.start) >= hhmm_minutes(self.end):
            raise ValueError(f"slot start {self.start} is not before end {self.end}")
        return self


class DayPlan(Record):
    date: str  # ISO date, UTC
    anchor_activities: list[str] = Field(min_length=1, max_length=6)
    slots: list[SlotPlan] = Field(default_factory=list)


class Consistency(Record):
    """Bidirectional validation scores of one week (None where a check failed or was off)."""

    forward: int | None = None
    backward_llm: int | None = None
    backward_embed: float | None = None
    reconstructed: str | None = None
    combined: float | None = None
    regenerations: int = 0


class WeekPlan(Record):
    index: int = Field(ge=0)
    start_date: str
    theme: str
    rhythm: str
    days: list[DayPlan] = Field(min_length=7, max_length=7)
    consistency: Consistency = Field(default_factory=Consistency)


class Trajectory(Record):
    schema_id: Literal["recworld.lunar.trajectory/1"] = Field(
        default="recworld.lunar.trajectory/1", alias="schema"
    )
    user_id: str
    start_ts: int  # Monday 00:00 of week 0 in the user's local time (demographic.timezone; UTC if none)
    weeks: list[WeekPlan]


# -- behaviour records -----------------------------------------------------------------------


class BehaviourRecord(Record):
    schema_id: Literal["recworld.lunar.record/1"] = Field(default="recworld.lunar.record/1", alias="schema")
    record_id: str
    user_id: str
    timestamp: int
    domain: Category
    type: BehaviourType
    fields: dict[str, FieldValue] = Field(default_factory=dict)
    provenance: Provenance = Provenance.SYNTHETIC

    def to_line(self, tz: tzinfo | None = None) -> str:
        """One text line per record: what contexts show and RAG embeds (local time when ``tz`` is given)."""
        when = stamp(self.timestamp) if tz is None else stamp(self.timestamp, tz)
        fields = "; ".join(f"{k}={v}" for k, v in sorted(self.fields.items()))
        return f"[{self.record_id}] {when} {self.domain.value}/{self.type.value} {fields}".rstrip()


def records_block(records: Sequence[BehaviourRecord], tz: tzinfo | None = None) -> str:
    """Records one per line (:meth:`BehaviourRecord.to_line`) in zone ``tz``, as prompts show them."""
    return "\n".join(r.to_line(tz) for r in records)


# -- queries, evidence, rubrics --------------------------------------------------------------


class Query(Record):
    schema_id: Literal["recworld.lunar.query/1"] = Field(default="recworld.lunar.query/1", alias="schema")
    query_id: str
    user_id: str
    text: str = Field(min_length=3)
    domains: list[Category] = Field(min_length=1)
    multi_domain: bool

    @model_validator(mode="after")
    def _flag(self) -> Query:
        if self.multi_domain != (len(set(self.domains)) > 1):
            raise ValueError("multi_domain must be true exactly when more than one domain is tagged")
        return self


class DomainDecision(Record):
    domain: Category
    useful: bool
    reason: str


class RecordEffect(Record):
    record_id: str
    effect: str


class EvidenceSet(Record):
    record_ids: list[str] = Field(default_factory=list)
    domains: list[Category] = Field(default_factory=list)


class Rubric(Record):
    schema_id: Literal["recworld.lunar.rubric/1"] = Field(default="recworld.lunar.rubric/1", alias="schema")
    query_id: str
    user_id: str
    generic_answer: str
    decisions: list[DomainDecision]
    evidence: EvidenceSet
    effects: list[RecordEffect]
    facts: list[str]
    points: list[str]

    def describe(self) -> str:
        lines = ["Behavioural facts:"] + [f"- {f}" for f in self.facts]
        lines += ["Personalised points a strong answer makes:"] + [f"- {p}" for p in self.points]
        return "\n".join(lines)


# -- what a context setting answers from ----------------------------------------------------------


@dataclass(frozen=True)
class UserData:
    """One synthesised user as a context setting sees them: the profile, the records, the local zone.

    ``zone`` is the user's own time zone: every record a model is shown is rendered in it
    (:func:`records_block`), so a 13:00 lunch in Chicago reads 13:00, not 19:00 UTC.
    """

    profile: Profile
    records: tuple[BehaviourRecord, ...]
    zone: tzinfo = UTC


@dataclass(frozen=True)
class EvalInputs:
    """What every context setting answers: the (query, rubric) pairs and each user's data."""

    pairs: Sequence[tuple[Query, Rubric]]
    users: Mapping[str, UserData]
