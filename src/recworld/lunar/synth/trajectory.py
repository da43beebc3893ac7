"""Stage 2, Trajectory Planning: week theme → 7 day plans → time-slot plans.

Each level's output is the constraint of the level below, so one call decides
one granularity only. Real data anchors two levels: the week prompt sees
aggregate statistics of the user's real events in that week (counts per
domain and type, amounts, time-of-day spread); each day prompt sees that day's
real events in time order.

Records known only to the day (Amazon 2018, date-only exports: ``SafeUser.day_only``)
count in the week and anchor their day, but the time-of-day spread skips them and says
so, and a day's list shows them as ``(time unknown)`` rather than an invented hour.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, tzinfo

from pydantic import Field

from recworld.lunar import localtime
from recworld.lunar.llm import StructuredLLM
from recworld.lunar.llm.decoding import room
from recworld.lunar.privacy.safe import SafeUser
from recworld.lunar.schemas import (
    BehaviourRecord,
    BehaviourType,
    Category,
    DayPlan,
    Profile,
    Scene,
    SlotPlan,
    WeekPlan,
    hhmm_minutes,
)
from recworld.records import Draft

HHMM = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"


class WeekDraft(Draft):
    theme: str = Field(min_length=3, max_length=100)
    rhythm: str = Field(min_length=3, max_length=200)


class DayDraft(Draft):
    # Compact decoding keeps one item of each list (greedy small models loop in open lists).
    anchor_activities: list[str] = Field(min_length=1, max_length=4, json_schema_extra=room(1))


class DaysDraft(Draft):
    days: list[DayDraft] = Field(min_length=7, max_length=7)


class SceneDraft(Draft):
    who: str = Field(max_length=60)
    what: str = Field(max_length=80)
    when: str = Field(max_length=40)
    where: str = Field(max_length=60)
    why: str = Field(max_length=80)
    how: str = Field(max_length=60)


class SlotDraft(Draft):
    start: str = Field(pattern=HHMM)
    end: str = Field(pattern=HHMM)
    scene: SceneDraft
    expected: list[BehaviourType] = Field(min_length=1, max_length=3, json_schema_extra=room(1))
    domains: list[Category] = Field(min_length=1, max_length=2, json_schema_extra=room(1))


class SlotsDraft(Draft):
    slots: list[SlotDraft] = Field(min_length=1, max_length=6, json_schema_extra=room(1))


def iso_date(ts: int, tz: tzinfo = UTC) -> str:
    return localtime.iso_date(ts, tz)


def _part_of_day(ts: int, tz: tzinfo = UTC) -> str:
    hour = localtime.hour(ts, tz)
    return "night" if hour < 6 else "morning" if hour < 12 else "afternoon" if hour < 18 else "evening"


def week_statistics(
    records: Sequence[BehaviourRecord], tz: tzinfo = UTC, day_only: Collection[str] = ()
) -> str:
    """Aggregated real statistics of one week: the anchor of its theme.

    ``day_only`` holds the ids of records whose time of day is unknown: the time-of-day
    spread leaves them out and says how many it left out.
    """
    if not records:
        return "no real events this week"
    kinds = Counter(f"{r.domain.value}/{r.type.value}" for r in records)
    timed = [r for r in records if r.record_id not in day_only]
    parts = Counter(_part_of_day(r.timestamp, tz) for r in timed)
    amount = sum(
        float(v)
        for r in records
        for k, v in r.fields.items()
        if k in ("amount", "price") and isinstance(v, int | float)
    )
    out = [f"{len(records)} real events", "by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common())]
    if timed:
        out.append(
            "time of day: "
            + ", ".join(f"{p} {parts.get(p, 0)}" for p in ("morning", "afternoon", "evening", "night"))
        )
    if len(timed) < len(records):
        out.append(f"time of day unknown for {len(records) - len(timed)} (the source records dates only)")
    if amount:
        out.append(f"total amount {amount:.2f}")
    return "; ".join(out)


def day_events(
    records: Sequence[BehaviourRecord], limit: int = 12, tz: tzinfo = UTC, day_only: Collection[str] = ()
) -> str:
    """A day's real events in time order (the day plan's anchors); day-only ones without an hour."""
    if not records:
        return "none"
    lines = []
    for r in sorted(records, key=lambda r: r.timestamp)[:limit]:
        what = r.fields.get("title") or r.fields.get("name") or ""
        when = "(time unknown)" if r.record_id in day_only else localtime.hhmm(r.timestamp, tz)
        lines.append(f"{when} {r.domain.value}/{r.type.value} {what}".rstrip())
    more = len(records) - limit
    return "; ".join(lines) + (f"; and {more} more" if more > 0 else "")


def _week_prompt(
    profile: Profile,
    stats: str | None,
    previous: Sequence[str],
    index: int,
    variant: int,
    feedback: Sequence[str] = (),
) -> str:
    lines = [
        f"Plan week {index + 1} of this person's life as a theme and a behavioural rhythm.",
        f"Profile:\n{profile.describe()}",
    ]
    if stats is not None:
        lines.append(f"The person's real activity this week: {stats}. The theme must fit it.")
    if previous:
        lines.append("Earlier week themes: " + " | ".join(previous))
    if variant:
        lines.append(f"(Regeneration {variant}: make the plan more coherent.)")
    if feedback:  # the validators' issues with the rejected plan
        lines.append("Problems reviewers found in the previous plan (fix them): " + " | ".join(feedback))
    lines.append(
        'JSON shape: {"theme": "routine workweek", "rhythm": "office days, gym twice, takeout on Friday"}'
    )
    return "\n".join(lines)


def _days_prompt(
    profile: Profile, week: WeekDraft, day_anchors: Sequence[str] | None, dates: Sequence[str]
) -> str:
    lines = [
        f"Week theme: {week.theme}. Rhythm: {week.rhythm}.",
        f"Profile:\n{profile.describe()}",
        "Give 7 day plans (Monday to Sunday), each with 1 to 4 anchor activities that serve the week theme.",
    ]
    if day_anchors is not None:
        lines.append("Real events per day (keep the plans consistent with them):")
        lines += [f"- {d}: {a}" for d, a in zip(dates, day_anchors, strict=True)]
    lines.append('JSON shape: {"days": [{"anchor_activities": ["..."]}, ... 7 entries]}')
    return "\n".join(lines)


def _slots_prompt(
    profile: Profile, week: WeekDraft, date: str, activities: Sequence[str], real: str | None, max_slots: int
) -> str:
    lines = [
        f"Week theme: {week.theme}. Date {date}. Day's anchor activities: {'; '.join(activities)}.",
        f"Profile:\n{profile.describe()}",
        f"Split the day into 1 to {max_slots} time slots (HH:MM start and end, in order, not overlapping).",
        "Each slot has a who/what/when/where/why/how scene, expected behaviour types "
        f"({', '.join(t.value for t in BehaviourType)}) "
        f"and 1 or 2 domains ({', '.join(c.value for c in Category)}).",
    ]
    if real is not None:
        lines.append(f"Real events of the day that slots must cover: {real}")
    lines.append(
        'JSON shape: {"slots": [{"start": "08:00", "end": "09:00", "scene": {"who": ..., "what": ..., '
        '"when": ..., "where": ..., "why": ..., "how": ...}, "expected": ["ride"], '
        '"domains": ["local_transport"]}]}'
    )
    return "\n".join(lines)


def _slots_check(max_slots: int) -> Callable[[SlotsDraft], str | None]:
    def check(draft: SlotsDraft) -> str | None:
        if len(draft.slots) > max_slots:
            return f"at most {max_slots} slots"
        last = -1
        for slot in draft.slots:
            start, end = hhmm_minutes(slot.start), hhmm_minutes(slot.end)
            if start >= end:
                return f"slot {slot.start}-{slot.end} ends before it starts"
            if start < last:
                return "slots overlap or are out of order"
            last = end
        return None

    return check


async def plan_week(
    llm: StructuredLLM,
    profile: Profile,
    user: SafeUser,
    *,
    index: int,
    start_ts: int,
    previous_themes: Sequence[str],
    use_anchors: bool,
    max_slots: int,
    variant: int = 0,
    feedback: Sequence[str] = (),
    active_days: int = 7,
) -> WeekPlan | None:
    """Plan one week top-down; None when the week or day level fails (slot failures leave a day bare)."""
    # Local midnights, DST-safe: a week across a switch is 167 or 169 hours, a day 23 or 25.
    bounds = [localtime.day_start(start_ts, index * 7 + d, user.zone) for d in range(8)]
    week_start = bounds[0]
    key = f"{profile.user_id}/w{index}/r{variant}"
    real_week = user.within(week_start, bounds[7]) if use_anchors else None
    stats = week_statistics(real_week, user.zone, user.day_only) if real_week is not None else None
    week = await llm.structured(
        _week_prompt(profile, stats, previous_themes, index, variant, feedback),
        WeekDraft,
        stage="week",
        key=key,
        max_tokens=96,
    )
    if week is None:
        return None
    dates = [iso_date(bounds[d], user.zone) for d in range(7)]
    real_days = [user.within(bounds[d], bounds[d + 1]) for d in range(7)] if use_anchors else None
    anchors_text = (
        [day_events(r, tz=user.zone, day_only=user.day_only) for r in real_days]
        if real_days is not None
        else None
    )
    days = await llm.structured(
        _days_prompt(profile, week, anchors_text, dates), DaysDraft, stage="days", key=key, max_tokens=240
    )
    if days is None:
        return None
    slot_drafts = await _plan_slots(
        llm, profile, week, days, dates, anchors_text, key, max_slots, active_days
    )
    day_plans = []
    for d in range(7):
        drafted = slot_drafts[d] if d < active_days else None
        slots = [] if drafted is None else [_slot(s) for s in drafted.slots]
        day_plans.append(
            DayPlan(date=dates[d], anchor_activities=days.days[d].anchor_activities, slots=slots)
        )
    return WeekPlan(index=index, start_date=dates[0], theme=week.theme, rhythm=week.rhythm, days=day_plans)


async def _plan_slots(
    llm: StructuredLLM,
    profile: Profile,
    week: WeekDraft,
    days: DaysDraft,
    dates: Sequence[str],
    anchors_text: Sequence[str | None] | None,
    key: str,
    max_slots: int,
    active_days: int,
) -> list[SlotsDraft | None]:
    """The slot plans of the first ``active_days`` days, asked for together."""
    check = _slots_check(max_slots)
    return list(
        await asyncio.gather(
            *(
                llm.structured(
                    _slots_prompt(
                        profile,
                        week,
                        dates[d],
                        days.days[d].anchor_activities,
                        anchors_text[d] if anchors_text is not None else None,
                        max_slots,
                    ),
                    SlotsDraft,
                    stage="slots",
                    key=f"{key}/d{d}",
                    check=check,
                    max_tokens=280,
                )
                for d in range(active_days)
            )
        )
    )


def _slot(draft: SlotDraft) -> SlotPlan:
    return SlotPlan(
        start=draft.start,
        end=draft.end,
        scene=Scene(**draft.scene.model_dump()),
        expected=list(dict.fromkeys(draft.expected)),
        domains=list(dict.fromkeys(draft.domains)),
    )
