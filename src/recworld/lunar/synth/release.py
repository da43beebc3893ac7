"""What leaves the run: de-identified profiles, trajectories and records, and nothing else.

``RUN/dataset/`` is the releasable folder. It holds exactly three files, built
here from the synthesis result:

* source user ids become ``user-NNN`` (also inside record ids);
* every text goes through one :class:`~recworld.lunar.deid.Deidentifier` in two
  passes (learn all names first, then replace), with the real anchors' titles
  and names redacted as ``<TITLE_n>`` (day and slot plans are prompted with real
  events and may repeat them);
* each user's timeline is moved by whole weeks to the same time of year in
  :data:`RELEASE_YEAR`: weekdays and hours are kept (and, up to a few days and
  changes in the DST rules, the season, so local hours around DST match the
  real reference), the real dates are not.

Working state (the response cache with raw replies, failure keys naming source
users, real statistics, the manifest) stays in ``RUN/`` beside ``dataset/``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, timedelta

from recworld.lunar import timeutil
from recworld.lunar.deid import Deidentifier
from recworld.lunar.schemas import BehaviourRecord, Profile, Trajectory
from recworld.lunar.synth.copies import is_identity_key
from recworld.lunar.synth.result import SynthResult
from recworld.lunar.timeutil import DAY_S, WEEK_S

RELEASED = ("profiles.jsonl", "trajectories.jsonl", "records.jsonl")
RELEASE_YEAR = 2024


def anchor_terms(records: Iterable[BehaviourRecord]) -> set[str]:
    """Real titles, names and ids of anchor records (with and without a ``(1995)`` year suffix)."""
    terms: set[str] = set()
    for r in records:
        for key, value in r.fields.items():
            if isinstance(value, str) and is_identity_key(key):
                terms.add(value.strip())
                if value.rstrip().endswith(")") and "(" in value:
                    terms.add(value[: value.rindex("(")].strip())
    return {t for t in terms if t}


def _shift_date(iso: str, days: int) -> str:
    return (date.fromisoformat(iso) - timedelta(days=days)).isoformat()


def release_offset(start_ts: int) -> int:
    """Seconds to subtract: the whole number of weeks nearest to moving ``start_ts`` into RELEASE_YEAR."""
    start = timeutil.local(start_ts)
    try:
        target = start.replace(year=RELEASE_YEAR)
    except ValueError:  # 29 February
        target = start.replace(year=RELEASE_YEAR, day=28)
    return round((start_ts - target.timestamp()) / WEEK_S) * WEEK_S


def rebase(
    trajectory: Trajectory, records: Sequence[BehaviourRecord]
) -> tuple[Trajectory, list[BehaviourRecord]]:
    """Move a user's trajectory and records by whole weeks into the release year."""
    offset = release_offset(trajectory.start_ts)
    days = offset // DAY_S
    weeks = [
        w.model_copy(
            update={
                "start_date": _shift_date(w.start_date, days),
                "days": [d.model_copy(update={"date": _shift_date(d.date, days)}) for d in w.days],
            }
        )
        for w in trajectory.weeks
    ]
    moved = trajectory.model_copy(update={"start_ts": trajectory.start_ts - offset, "weeks": weeks})
    return moved, [r.model_copy(update={"timestamp": r.timestamp - offset}) for r in records]


def anonymise(result: SynthResult) -> tuple[list[Profile], list[Trajectory], list[BehaviourRecord]]:
    """The released form of every user: anonymous ids, de-identified text, rebased time."""
    deid = Deidentifier(redact=anchor_terms(r for a in result.anchors for r in a.records))
    for user in result.users:  # pass 1: names anywhere in the run
        for r in user.records:
            deid.learn_record(r)
        deid.learn_profile(user.profile)
        deid.learn_trajectory(user.trajectory)
    profiles, trajectories, records = [], [], []
    for n, user in enumerate(result.users):  # pass 2: replace
        anon = f"user-{n:03d}"
        trajectory, moved = rebase(user.trajectory, user.records)
        for r in moved:
            clean = deid.record(r)
            record_id = clean.record_id.replace(r.user_id, anon, 1)
            records.append(clean.model_copy(update={"user_id": anon, "record_id": record_id}))
        demo = user.profile.demographic.model_copy(update={"user_id": anon})
        profiles.append(deid.profile(user.profile.model_copy(update={"user_id": anon, "demographic": demo})))
        trajectories.append(deid.trajectory(trajectory.model_copy(update={"user_id": anon})))
    return profiles, trajectories, records
