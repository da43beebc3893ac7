"""The only user type a synthesis prompt can be built from: :class:`SafeUser`.

Invariant: every value a synthesis prompt shows comes from a :class:`SafeUser`, and a
SafeUser is made only by :func:`sanitise`, which keeps a column only as its type in the
allowlist schema says (:mod:`~recworld.lunar.privacy.columns`): identifiers dropped or
replaced by surrogates, quasi-identifiers generalised, behaviour kept, free text through
Presidio or dropped, unknown columns dropped and reported. Times move by the run's secret
offset (:mod:`~recworld.lunar.privacy.secret`) on the local wall clock, so weekdays and
hours are kept and no real date or timestamp reaches a prompt.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta, tzinfo

from recworld.lunar import localtime
from recworld.lunar.anchors import AnchorUser
from recworld.lunar.anchors.user import pseudonym_prefix
from recworld.lunar.deid import age_band, coarse_text, region
from recworld.lunar.privacy import freetext
from recworld.lunar.privacy.columns import Column, ColumnType, Surrogate, event_column, user_column
from recworld.lunar.privacy.secret import offset_weeks
from recworld.lunar.privacy.surrogates import Surrogates
from recworld.lunar.schemas import BehaviourRecord, Demographic, FieldValue

_SEAL = object()
# Numbers with this many digits are identifiers (phones, ids, timestamps): never kept as numbers.
ID_DIGITS = 5


@dataclass(frozen=True)
class SafeUser:
    """A sanitised anchor user (module docstring); the synthesis stages accept nothing else."""

    _user: AnchorUser
    _seal: object = field(repr=False)

    def __post_init__(self) -> None:
        if self._seal is not _SEAL:
            raise TypeError("a SafeUser is made only by recworld.lunar.privacy.sanitise")

    demographic = property(lambda self: self._user.demographic)
    records = property(lambda self: self._user.records)
    day_only = property(lambda self: self._user.day_only)

    @property
    def user_id(self) -> str:
        return self._user.user_id

    @property
    def zone(self) -> tzinfo:
        return self._user.zone

    def start_ts(self) -> int:
        return self._user.start_ts()

    def within(self, start: int, end: int) -> list[BehaviourRecord]:
        return self._user.within(start, end)

    def timed(self, records: Sequence[BehaviourRecord] | None = None) -> list[BehaviourRecord]:
        return self._user.timed(records)

    def timed_within(self, start: int, end: int) -> list[BehaviourRecord]:
        return self._user.timed_within(start, end)


@dataclass
class ColumnReport:
    """What the sanitiser did with each column (names and counts only, never values)."""

    kept: Counter[str] = field(default_factory=Counter)  # "column (type)" -> values kept or replaced
    dropped: Counter[str] = field(default_factory=Counter)  # "column (type)" -> values dropped
    unknown: Counter[str] = field(default_factory=Counter)  # columns not in the schema -> values dropped
    free_text: str = "presidio"

    def summary(self) -> dict[str, dict[str, int] | str]:
        return {
            "kept": dict(sorted(self.kept.items())),
            "dropped": dict(sorted(self.dropped.items())),
            "unknown_dropped": dict(sorted(self.unknown.items())),
            "free_text": self.free_text,
        }


def reported(key: str) -> str:
    """A column name as the report may say it: a lower-case field name, else a placeholder.

    (A key can itself be a name: "Mike Brown" as a field key.)
    """
    return key if re.fullmatch(r"[a-z][a-z0-9_.]{0,30}", key) else "(a column whose name is not a field name)"


def shift(ts: int, weeks: int, tz: tzinfo) -> int:
    """``ts`` moved ``weeks`` weeks on the local wall clock of ``tz`` (weekday and hour kept)."""
    wall = localtime.local(ts, tz).replace(tzinfo=None) + timedelta(weeks=weeks)
    return int(wall.replace(tzinfo=tz).timestamp())


def real_days(users: Sequence[AnchorUser]) -> set[date]:
    days = {localtime.local(r.timestamp, u.zone).date() for u in users for r in u.records}
    return days | {date.fromisoformat(d) for u in users for d in u.day_only.values()}


@dataclass
class _Context:
    surrogates: Surrogates
    report: ColumnReport
    use_presidio: bool
    deny: tuple[str, ...] = ()


def _number(value: FieldValue, column: Column) -> FieldValue | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if not math.isfinite(value) or len(str(abs(int(value)))) >= ID_DIGITS:
        return None
    if column.surrogate is Surrogate.ROUND and value:
        digits = 1 - math.floor(math.log10(abs(value)))
        rounded = round(float(value), digits)
        return int(rounded) if rounded.is_integer() else rounded
    return value


def _field(
    key: str, value: FieldValue, record: BehaviourRecord, user: str, ctx: _Context
) -> FieldValue | None:
    column = event_column(key)
    if column is None:
        ctx.report.unknown[reported(key)] += 1
        return None
    out = _value(value, column, record, user, ctx)
    (ctx.report.kept if out is not None else ctx.report.dropped)[
        f"{reported(key)} ({column.type.value})"
    ] += 1
    return out


def _value(
    value: FieldValue, column: Column, record: BehaviourRecord, user: str, ctx: _Context
) -> FieldValue | None:
    s = ctx.surrogates
    text = str(value).strip()
    match column.surrogate:
        case Surrogate.PERSON:
            return s.person(user, text) if text else None
        case Surrogate.COMPANY:
            return s.company(user, text) if text else None
        case Surrogate.VENUE:
            return s.venue(user, record.domain, text) if text else None
        case Surrogate.ITEM:
            return s.item(record.domain, _about(record))
        case Surrogate.PRESIDIO:
            return _free_text(text, user, ctx)
        case Surrogate.ROUND:
            return _number(value, column)
        case Surrogate.KEEP if not isinstance(value, str):
            return _number(value, column)
        case Surrogate.KEEP:
            ok = len(text) <= 60 and sum(c.isdigit() for c in text) < ID_DIGITS
            return text if ok else None
    return None


def _about(record: BehaviourRecord) -> str | None:
    for key in ("genres", "genre", "category", "categories", "cuisine", "style"):
        value = record.fields.get(key)
        if isinstance(value, str) and value.strip() and len(value) <= 60:
            return ", ".join(v.strip() for v in value.replace("|", ",").split(",") if v.strip()).lower()
    return None


def _free_text(text: str, user: str, ctx: _Context) -> str | None:
    if not text or not ctx.use_presidio:
        return None
    return freetext.anonymise(text, user, ctx.surrogates, ctx.deny)


def _demographic(demo: Demographic, anon: str, ctx: _Context) -> Demographic:
    extra: dict[str, str] = {}
    for key, value in demo.extra.items():
        column = user_column(key)
        if column is None:
            ctx.report.unknown[f"users.{reported(key)}"] += 1
            continue
        kept = _free_text(value, anon, ctx) if column.type is ColumnType.FREE_TEXT else None
        if column.surrogate is Surrogate.AGE_BAND and value.strip().isdigit():
            kept = age_band(int(value))
        if column.surrogate is Surrogate.REGION:
            kept = region(value)
        (ctx.report.kept if kept else ctx.report.dropped)[f"users.{reported(key)} ({column.type.value})"] += 1
        if kept:
            extra[key] = kept
    return Demographic(
        user_id=anon,
        age_band=demo.age_band or age_band(demo.age),
        gender=coarse_text(demo.gender, 3),
        occupation=coarse_text(demo.occupation),
        region=demo.region or region(demo.location),
        extra=extra,
        timezone=demo.timezone,
    )


def _identifiers(user: AnchorUser) -> tuple[str, ...]:
    """The user's own identifier values: a deny list for their free text."""
    values = [
        v
        for k, v in user.demographic.extra.items()
        if (c := user_column(k)) and c.type is ColumnType.IDENTIFIER
    ]
    for r in user.records:
        for k, v in r.fields.items():
            column = event_column(k)
            if column and column.surrogate in (Surrogate.PERSON, Surrogate.COMPANY) and isinstance(v, str):
                values.append(v)
    return tuple(dict.fromkeys(v.strip() for v in values if len(v.strip()) > 2))


def sanitise(
    users: Sequence[AnchorUser], key: bytes, *, free_text: bool = True
) -> tuple[list[SafeUser], ColumnReport, int]:
    """The users as synthesis may see them, the column report, and the secret offset in weeks."""
    use_presidio = free_text and freetext.available()
    report = ColumnReport(free_text="presidio" if use_presidio else "dropped")
    if free_text and not use_presidio:
        report.free_text = "dropped (install the privacy extra for Presidio)"
    weeks = offset_weeks(key, real_days(users))
    prefix = pseudonym_prefix([u.user_id for u in users])
    surrogates = Surrogates(key)
    out = []
    for n, user in enumerate(users):
        anon = f"{prefix}{n:03d}"
        ctx = _Context(surrogates, report, use_presidio, _identifiers(user))
        out.append(SafeUser(_safe_user(user, anon, weeks, ctx), _SEAL))
    return out, report, weeks


def _safe_user(user: AnchorUser, anon: str, weeks: int, ctx: _Context) -> AnchorUser:
    zone = user.zone
    records, day_only = [], {}
    for k, r in enumerate(user.records):
        rid = f"anchor-{anon}-{k:05d}"
        fields = {
            key: v for key, raw in r.fields.items() if (v := _field(key, raw, r, anon, ctx)) is not None
        }
        records.append(
            BehaviourRecord(
                record_id=rid,
                user_id=anon,
                timestamp=shift(r.timestamp, weeks, zone),
                domain=r.domain,
                type=r.type,
                fields=fields,
                provenance=r.provenance,
            )
        )
        if r.record_id in user.day_only:
            day_only[rid] = (
                date.fromisoformat(user.day_only[r.record_id]) + timedelta(weeks=weeks)
            ).isoformat()
    demo = _demographic(user.demographic, anon, ctx)
    return AnchorUser(demo, tuple(records), day_only)
