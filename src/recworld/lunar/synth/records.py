"""Stage 3, Record Instantiation: each slot plan becomes concrete behaviour records.

Real records inside a slot's window are shown verbatim as hard anchors so the
new records follow their timing, category and kind of place; they are never kept, and
the prompt asks for new names, titles, merchants, places and references. Records known
only to the day (``SafeUser.day_only``) are never hard anchors: they have no slot.
:func:`~recworld.lunar.synth.copies.remove_anchors` drops anchor records and any
synthetic record that copies an anchor's content (records that only share its time stay).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from datetime import tzinfo

from pydantic import Field

from recworld.lunar import localtime
from recworld.lunar.llm import StructuredLLM
from recworld.lunar.llm.decoding import room
from recworld.lunar.privacy.safe import SafeUser
from recworld.lunar.schemas import (
    BehaviourRecord,
    BehaviourType,
    Category,
    FieldValue,
    Profile,
    Provenance,
    SlotPlan,
    WeekPlan,
    hhmm_minutes,
)
from recworld.lunar.synth.copies import remove_anchors
from recworld.lunar.synth.trajectory import HHMM
from recworld.records import Draft

__all__ = ["instantiate_week", "remove_anchors"]


class FieldDraft(Draft):
    name: str = Field(min_length=1, max_length=30)
    value: str = Field(max_length=80)


class RecordDraft(Draft):
    time: str = Field(pattern=HHMM)
    domain: Category
    type: BehaviourType
    # Compact decoding: one field per record and one record per slot (greedy small models loop;
    # the volume comes from the slots).
    fields: list[FieldDraft] = Field(default_factory=list, max_length=5, json_schema_extra=room(1))


class RecordsDraft(Draft):
    records: list[RecordDraft] = Field(min_length=1, max_length=6, json_schema_extra=room(1))


def _anchor_json(record: BehaviourRecord, tz: tzinfo) -> str:
    return json.dumps(
        {
            "time": localtime.hhmm(record.timestamp, tz),
            "domain": record.domain.value,
            "type": record.type.value,
            "fields": record.fields,
        },
        sort_keys=True,
    )


def _prompt(
    profile: Profile, week: WeekPlan, date: str, slot: SlotPlan, anchors: Sequence[str], max_records: int
) -> str:
    s = slot.scene
    lines = [
        f"Week theme: {week.theme}. Date {date}, slot {slot.start}-{slot.end}.",
        f"Scene: who {s.who}; what {s.what}; when {s.when}; where {s.where}; why {s.why}; how {s.how}.",
        f"Expected behaviour types: {', '.join(t.value for t in slot.expected)}; "
        f"domains: {', '.join(d.value for d in slot.domains)}.",
        f"Profile:\n{profile.describe()}",
        f"Write 1 to {max_records} app behaviour records inside the slot "
        f"(time HH:MM between {slot.start} and {slot.end}),"
        " each with a domain, a type and a few named fields (merchant, item, amount, place, ...).",
    ]
    if anchors:
        lines.append(
            "Real records in this window (hard anchors: match their timing, category and kind of place; "
            "invent new names, titles, merchants, places, references and amounts; copy no value from them):"
        )
        lines += [f"- {a}" for a in anchors]
    # The example's time is the slot start: small models copy the example, and a fixed
    # "12:30" failed the in-slot check for every other slot (measured with SmolLM2).
    lines.append(
        f'JSON shape: {{"records": [{{"time": "{slot.start}", "domain": "{slot.domains[0].value}", '
        f'"type": "{slot.expected[0].value}", "fields": [{{"name": "merchant", "value": "..."}}]}}]}}'
    )
    return "\n".join(lines)


def _check(slot: SlotPlan, max_records: int) -> Callable[[RecordsDraft], str | None]:
    lo, hi = hhmm_minutes(slot.start), hhmm_minutes(slot.end)

    def check(draft: RecordsDraft) -> str | None:
        if len(draft.records) > max_records:
            return f"at most {max_records} records"
        for r in draft.records:
            if not lo <= hhmm_minutes(r.time) <= hi:
                return f"time {r.time} is outside the slot {slot.start}-{slot.end}"
        return None

    return check


def _value(text: str) -> FieldValue:
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text else number


async def instantiate_week(
    llm: StructuredLLM,
    profile: Profile,
    user: SafeUser,
    week: WeekPlan,
    *,
    start_ts: int,
    use_anchors: bool,
    max_records: int,
) -> list[BehaviourRecord]:
    """Records for every slot of a week (slots that fail after retries contribute none)."""
    jobs = []
    where = []
    zone = user.zone
    for d, day in enumerate(week.days):
        day_start = localtime.day_start(start_ts, week.index * 7 + d, zone)  # DST-safe local midnight
        for n, slot in enumerate(day.slots):
            lo = localtime.at(day_start, hhmm_minutes(slot.start), zone)
            hi = localtime.at(day_start, hhmm_minutes(slot.end), zone)
            real = user.timed_within(lo, hi + 60) if use_anchors else []
            anchors = [_anchor_json(r, zone) for r in real]
            key = f"{profile.user_id}/w{week.index}/d{d}/s{n}"
            jobs.append(
                llm.structured(
                    _prompt(profile, week, day.date, slot, anchors[:10], max_records),
                    RecordsDraft,
                    stage="records",
                    key=key,
                    check=_check(slot, max_records),
                    max_tokens=240,
                )
            )
            where.append((key, day_start))
    drafts = await asyncio.gather(*jobs)
    out: list[BehaviourRecord] = []
    for (key, day_start), draft in zip(where, drafts, strict=True):
        if draft is None:
            continue
        for n, r in enumerate(sorted(draft.records, key=lambda r: r.time)):
            fields = {f.name.strip(): _value(f.value.strip()) for f in r.fields if f.name.strip()}
            out.append(
                BehaviourRecord(
                    record_id=f"{key}/r{n}",
                    user_id=profile.user_id,
                    timestamp=localtime.at(day_start, hhmm_minutes(r.time), zone),
                    domain=r.domain,
                    type=r.type,
                    fields=fields,
                    provenance=Provenance.SYNTHETIC,
                )
            )
    return out
