"""Each synthesised user's local time zone, as the evaluation reads it: what a model sees is local time.

A record is an instant (Unix seconds). Shown to a model (a context, a rubric prompt,
the relevance ranking, the memory model) it is rendered in the user's own zone, so a
lunch planned for 13:00 in Chicago reads ``Mon 13:00``, not ``Mon 19:00`` UTC, and an
evening record keeps its weekday.

The zone is read from the released profile: ``Profile.timezone`` if the release
carries it there, else ``demographic.timezone`` (where synthesis stores it today).
Both are read defensively, because the release gate decides which demographic fields
leave the run. A user with neither takes the command's ``--timezone``; without that,
UTC with one warning (:func:`recworld.lunar.timeutil.default_zone`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import tzinfo

from recworld.lunar import timeutil
from recworld.lunar.schemas import Profile


def profile_zone_name(profile: Profile) -> str | None:
    """The IANA zone a profile records for its user, or None."""
    for holder in (profile, profile.demographic):
        name = getattr(holder, "timezone", None)  # the release may keep it on either, or drop it
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


def user_zones(profiles: Iterable[Profile], fallback: str | None) -> dict[str, tzinfo]:
    """Each user's zone: their profile's, else ``fallback`` (UTC with one warning when that is None too)."""
    named = {p.user_id: profile_zone_name(p) for p in profiles}
    default: str | None = fallback
    if any(n is None for n in named.values()):
        default = timeutil.default_zone(fallback)
    return {uid: timeutil.zone(name or default) for uid, name in named.items()}
