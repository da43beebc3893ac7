"""One real anchor user: a demographic record and the user's real records in time order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import tzinfo

from recworld.lunar import timeutil
from recworld.lunar.schemas import BehaviourRecord, Demographic


@dataclass(frozen=True)
class AnchorUser:
    """One real user: demographics and chronologically ordered real records."""

    demographic: Demographic
    records: tuple[BehaviourRecord, ...]

    @property
    def user_id(self) -> str:
        return self.demographic.user_id

    @property
    def zone(self) -> tzinfo:
        """The user's local time zone (``demographic.timezone``; UTC when unknown)."""
        return timeutil.zone(self.demographic.timezone)

    def start_ts(self) -> int:
        """Monday 00:00 local time of the week of the first real record (week 0 of the trajectory)."""
        if not self.records:
            return 0
        return timeutil.week_start(min(r.timestamp for r in self.records), self.zone)

    def within(self, start: int, end: int) -> list[BehaviourRecord]:
        return [r for r in self.records if start <= r.timestamp < end]


def with_default_zone(users: Sequence[AnchorUser], name: str | None) -> list[AnchorUser]:
    """Give every user without a zone the dataset's zone ``name`` (UTC with one warning if None)."""
    bare = [u for u in users if u.demographic.timezone is None]
    if not bare:
        return list(users)
    fallback = timeutil.default_zone(name)
    return [
        u
        if u.demographic.timezone is not None
        else replace(u, demographic=u.demographic.model_copy(update={"timezone": fallback}))
        for u in users
    ]
