"""One real anchor user: a demographic record and the user's real records in time order.

Some sources know only the *day* of a record: Amazon Reviews 2018 stores ``reviewTime``
(``"03 4, 2019"``) and ``unixReviewTime`` at 00:00 UTC of that date, and many exports
write a date alone. Such records are *day-only* (:attr:`AnchorUser.day_only` maps their
ids to the calendar date): they anchor the day they fall on, never a time slot, and no
hour is read from them. Their timestamp is placed at local noon of that date in the
user's zone, so weekday and day arithmetic hold in any zone while nothing pretends to
know the hour (:meth:`AnchorUser.timed` is what time-of-day statistics may read).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, tzinfo

from recworld.lunar import localtime
from recworld.lunar.deid import prompt_demographic
from recworld.lunar.localtime import DAY_S
from recworld.lunar.schemas import BehaviourRecord, Demographic


@dataclass(frozen=True)
class AnchorUser:
    """One real user: demographics and chronologically ordered real records.

    ``day_only`` maps the ids of records known only to the day to their calendar date
    (ISO); their timestamps are placed at local noon of that date (see the module docstring).
    """

    demographic: Demographic
    records: tuple[BehaviourRecord, ...]
    day_only: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.day_only:
            return
        zone = self.zone
        placed = tuple(
            r.model_copy(update={"timestamp": local_noon(self.day_only[r.record_id], zone)})
            if r.record_id in self.day_only
            else r
            for r in self.records
        )
        object.__setattr__(self, "records", tuple(sorted(placed, key=lambda r: (r.timestamp, r.record_id))))

    @property
    def user_id(self) -> str:
        return self.demographic.user_id

    @property
    def zone(self) -> tzinfo:
        """The user's local time zone (``demographic.timezone``; UTC when unknown)."""
        return localtime.zone(self.demographic.timezone)

    def start_ts(self) -> int:
        """Monday 00:00 local time of the week of the first real record (week 0 of the trajectory)."""
        if not self.records:
            return 0
        return localtime.week_start(min(r.timestamp for r in self.records), self.zone)

    def within(self, start: int, end: int) -> list[BehaviourRecord]:
        """The real records in ``[start, end)`` (day-only records by the day they fall on)."""
        return [r for r in self.records if start <= r.timestamp < end]

    def is_day_only(self, record: BehaviourRecord) -> bool:
        return record.record_id in self.day_only

    def timed(self, records: Sequence[BehaviourRecord] | None = None) -> list[BehaviourRecord]:
        """The records (of ``records``, default all) whose time of day is known."""
        return [r for r in (self.records if records is None else records) if r.record_id not in self.day_only]

    def timed_within(self, start: int, end: int) -> list[BehaviourRecord]:
        """The records in ``[start, end)`` whose time of day is known: what a slot may anchor on."""
        return self.timed(self.within(start, end))


def local_noon(day: str, tz: tzinfo) -> int:
    d = date.fromisoformat(day)
    return int(datetime(d.year, d.month, d.day, 12, tzinfo=tz).timestamp())


def utc_day(ts: int) -> str:
    """The calendar date a day-granular source means by ``ts`` (its date at 00:00 UTC)."""
    return localtime.iso_date(ts, UTC)


def is_day_granular(timestamps: Sequence[int]) -> bool:
    """Whether a source's timestamps carry dates only: every one at 00:00:00 UTC (Amazon 2018)."""
    return bool(timestamps) and all(ts % DAY_S == 0 for ts in timestamps)


def with_default_zone(users: Sequence[AnchorUser], name: str | None) -> list[AnchorUser]:
    """Give every user without a zone the dataset's zone ``name`` (UTC with one warning if None)."""
    bare = [u for u in users if u.demographic.timezone is None]
    if not bare:
        return list(users)
    fallback = localtime.default_zone(name)
    return [
        u
        if u.demographic.timezone is not None
        else replace(u, demographic=u.demographic.model_copy(update={"timezone": fallback}))
        for u in users
    ]


PSEUDONYM = "user-"
_SAFE_PREFIX = "lunar-user-"


def pseudonym_prefix(source_ids: Sequence[str]) -> str:
    """``user-``, or ``lunar-user-`` when a source id already looks like a pseudonym."""
    if any(re.match(rf"^{re.escape(PSEUDONYM)}", s) for s in source_ids):
        return _SAFE_PREFIX
    return PSEUDONYM


def pseudonymised(users: Sequence[AnchorUser]) -> tuple[list[AnchorUser], dict[str, str]]:
    """The users as synthesis sees them: ``user-NNN`` ids, prompt-safe demographics.

    Ids follow the users' order (``load_anchors`` sorts them), so the same anchors give the
    same pseudonyms on a rerun; every key, record id, failure record and log line of the run
    carries the pseudonym, never the source id. The demographic loses what identifies a
    person (:func:`~recworld.lunar.deid.prompt_demographic`). Returns the users and the map
    source id -> pseudonym.
    """
    prefix = pseudonym_prefix([u.user_id for u in users])
    out, names = [], {}
    for n, user in enumerate(users):
        anon = f"{prefix}{n:03d}"
        names[user.user_id] = anon
        ids = {r.record_id: f"anchor-{anon}-{k:05d}" for k, r in enumerate(user.records)}
        records = tuple(
            r.model_copy(update={"user_id": anon, "record_id": ids[r.record_id]}) for r in user.records
        )
        demo = prompt_demographic(user.demographic).model_copy(update={"user_id": anon})
        day_only = {ids[k]: v for k, v in user.day_only.items() if k in ids}
        out.append(AnchorUser(demo, records, day_only))
    return out, names
