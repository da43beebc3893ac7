"""What a rater sees of one user: the profile, weekly summaries and (thinned) records in local time.

The LLM rater (:mod:`.ratings`) and the blind human sheet (:mod:`.annotate`) show the
same text, built here by one function with the same record count, for all seven
history dimensions, so their scores compare like with like. Record ids are left out:
they name users.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import tzinfo

import numpy as np

from recworld.lunar import localtime
from recworld.lunar.schemas import BehaviourRecord, Profile, Trajectory


def week_summaries(trajectory: Trajectory, records: Sequence[BehaviourRecord]) -> list[str]:
    """One line per week: theme, rhythm and what was actually logged."""
    by_week: dict[int, Counter[str]] = {}
    for r in records:
        week = (r.timestamp - trajectory.start_ts) // localtime.WEEK_S
        by_week.setdefault(int(week), Counter())[f"{r.domain.value}/{r.type.value}"] += 1
    lines = []
    for w in trajectory.weeks:
        logged = by_week.get(w.index, Counter())
        kinds = ", ".join(f"{k} {n}" for k, n in logged.most_common(6)) or "nothing logged"
        lines.append(f"Week {w.index + 1} ({w.start_date}): {w.theme}; rhythm: {w.rhythm}; logged: {kinds}")
    return lines


def thin(records: Sequence[BehaviourRecord], limit: int) -> list[BehaviourRecord]:
    """At most ``limit`` records, evenly spread over the whole span (not only the newest)."""
    ordered = sorted(records, key=lambda r: (r.timestamp, r.record_id))
    if len(ordered) <= limit:
        return ordered
    picks = np.linspace(0, len(ordered) - 1, limit).round().astype(int)
    return [ordered[i] for i in sorted(set(picks.tolist()))]


def record_line(record: BehaviourRecord, tz: tzinfo) -> str:
    """A record without its id: ids name the user, and the blind sheet must not."""
    fields = "; ".join(f"{k}={v}" for k, v in sorted(record.fields.items()))
    return (
        f"{localtime.stamp(record.timestamp, tz)} {record.domain.value}/{record.type.value} {fields}".rstrip()
    )


def history_text(
    profile: Profile,
    trajectory: Trajectory,
    records: Sequence[BehaviourRecord],
    *,
    max_records: int | None,
    tz: tzinfo | None = None,
) -> str:
    """Profile, weekly summaries and (unless ``max_records`` is None) thinned records in local time.

    ``tz`` is the user's zone (:func:`recworld.lunar.localtime.user_zones`); None reads the profile's.
    """
    tz = tz if tz is not None else localtime.zone(profile.zone_name())
    parts = [
        f"Profile:\n{profile.describe()}",
        "Weekly summaries:\n" + "\n".join(week_summaries(trajectory, records)),
    ]
    if max_records is not None:
        shown = thin(records, max_records)
        head = f"Records ({len(shown)} of {len(records)}, evenly spread, local time):"
        parts.append(head + "\n" + "\n".join(record_line(r, tz) for r in shown))
    return "\n\n".join(parts)
