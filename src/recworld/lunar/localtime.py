"""Local time for LUNAR: each user's zone, and every hour, weekday, date and week start read in it.

Timestamps are Unix seconds (UTC instants). A person's "evening" is evening where they
live: ML-100K ratings made at 22:00 in Chicago are 03:00 UTC, so reading hours in UTC put
American evenings at night, in the week statistics, the day prompts and the hour JSD.
What a model sees (a context, a rubric prompt, the relevance ranking, the memory model)
is rendered in the user's zone too, so a lunch planned for 13:00 in Chicago reads
``Mon 13:00``, not ``Mon 19:00`` UTC, and an evening record keeps its weekday.

The zone comes from the user's demographic record (``timezone``, an IANA name such as
``America/Chicago``: a ``timezone`` column in ``users.csv``; in a release,
:meth:`~recworld.lunar.schemas.Profile.zone_name`) or, for a whole dataset, from
``--timezone``. Without either, UTC is used and :func:`default_zone` warns once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from recworld.errors import ConfigError

_log = logging.getLogger("recworld.lunar")  # the stage's logger: the terminal and recworld.log

DAY_S = 24 * 3600
WEEK_S = 7 * DAY_S
UTC_WARNING = (
    "no time zone given for some users: hours and weekdays are read in UTC "
    "(give a timezone column in users.csv or --timezone, e.g. America/Chicago)"
)


def zone(name: str | None) -> tzinfo:
    """The zone named ``name`` (IANA, or ``UTC``); None means UTC. Unknown names are a ConfigError."""
    if name is None or name.strip().upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"unknown time zone {name!r} (use an IANA name such as America/Chicago)") from None


def default_zone(name: str | None, *, warn: bool = True) -> str:
    """The zone name to use when a user has none: ``name`` if given, else UTC with a warning.

    The warning goes to the ``recworld.lunar`` logger: one ``recworld: warning:`` line on the
    terminal and a line in the run's ``recworld.log``, not a Python warning with its source line.
    """
    if name is not None:
        zone(name)  # validate early: a typo fails before any model call
        return name
    if warn:
        _log.warning("%s", UTC_WARNING)
    return "UTC"


class ZonedUser(Protocol):
    """A user whose record may name a zone (a :class:`~recworld.lunar.schemas.Profile`)."""

    @property
    def user_id(self) -> str: ...

    def zone_name(self) -> str | None: ...


def user_zones(users: Iterable[ZonedUser], fallback: str | None) -> dict[str, tzinfo]:
    """Each user's zone: their own, else ``fallback`` (UTC with one warning when that is None too)."""
    named = {u.user_id: u.zone_name() for u in users}
    default: str | None = fallback
    if any(n is None for n in named.values()):
        default = default_zone(fallback)
    return {uid: zone(name or default) for uid, name in named.items()}


def local(ts: int, tz: tzinfo = UTC) -> datetime:
    return datetime.fromtimestamp(ts, tz)


def hour(ts: int, tz: tzinfo = UTC) -> int:
    return local(ts, tz).hour


def weekday(ts: int, tz: tzinfo = UTC) -> int:
    """0 = Monday."""
    return local(ts, tz).weekday()


def iso_date(ts: int, tz: tzinfo = UTC) -> str:
    return local(ts, tz).strftime("%Y-%m-%d")


def hhmm(ts: int, tz: tzinfo = UTC) -> str:
    return local(ts, tz).strftime("%H:%M")


def stamp(ts: int, tz: tzinfo = UTC) -> str:
    """Date, weekday and time as records are shown to models and raters."""
    return local(ts, tz).strftime("%Y-%m-%d %a %H:%M")


def _midnight(moment: datetime) -> int:
    tz = moment.tzinfo
    assert tz is not None
    return int(datetime(moment.year, moment.month, moment.day, tzinfo=tz).timestamp())


def week_start(ts: int, tz: tzinfo = UTC) -> int:
    """Monday 00:00 local time of the week holding ``ts``, as Unix seconds."""
    moment = local(ts, tz)
    return _midnight(moment - timedelta(days=moment.weekday()))


def day_start(week0: int, days: int, tz: tzinfo = UTC) -> int:
    """Local midnight ``days`` calendar days after the local midnight ``week0`` (DST-safe)."""
    return _midnight(local(week0, tz) + timedelta(days=days, hours=12))


def at(midnight: int, minutes: int, tz: tzinfo = UTC) -> int:
    """The instant the local wall clock of ``tz`` reads ``minutes`` past the local midnight ``midnight``."""
    day = local(midnight, tz)
    wall = datetime(day.year, day.month, day.day) + timedelta(minutes=minutes)
    return int(wall.replace(tzinfo=tz).timestamp())
