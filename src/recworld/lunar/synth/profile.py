"""Stage 1, Profile Expanding: a real demographic record becomes a structured profile.

The prompt carries the user's demographic record (what the paper expands) and, with
anchors, a summary of the user's own real records (:func:`records_summary`): per domain,
how many, of which kinds, their categories or genres, ratings and amounts, the span and
the weekdays (and the time of day where the source records one). Sources without
demographics (Amazon Reviews 2018) would otherwise give every user with the same domains
the same prompt, and with a shared cache the same profile; the summary makes each prompt,
and so each profile, the user's own. It names no item, merchant or place (aggregates only),
and every demographic left out of the record stays unknown: none is drawn from a public
distribution (the manifest counts users with and without a demographic record).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import mean
from typing import Literal

from pydantic import Field

from recworld.lunar import localtime
from recworld.lunar.llm import StructuredLLM
from recworld.lunar.llm.decoding import room
from recworld.lunar.privacy.safe import SafeUser
from recworld.lunar.schemas import CATEGORIES, Affinity, BehaviourRecord, Category, Lifestyle, Profile
from recworld.records import Draft

PROFILE_TOKENS = 320  # reply cap of the profile call


class AffinityDraft(Draft):
    category: Category
    # An enum decodes reliably even on tiny models; stored as (score - 1) / 4 in [0, 1].
    score: Literal[1, 2, 3, 4, 5]
    # Compact decoding keeps synthesis as small models finish it: one preference, three affinities.
    preferences: list[str] = Field(min_length=1, max_length=4, json_schema_extra=room(1))


class LifestyleDraft(Draft):
    clothing: str = Field(min_length=2, max_length=120)
    food: str = Field(min_length=2, max_length=120)
    housing: str = Field(min_length=2, max_length=120)
    mobility: str = Field(min_length=2, max_length=120)
    spending: str = Field(min_length=2, max_length=120)


class ProfileDraft(Draft):
    affinities: list[AffinityDraft] = Field(min_length=3, max_length=8, json_schema_extra=room(3))
    lifestyle: LifestyleDraft


# Descriptive fields summarised per domain (most common values): what the records are about.
SUMMARY_FIELDS = ("genres", "genre", "category", "categories", "cuisine", "style", "format")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _descriptors(records: Sequence[BehaviourRecord]) -> list[str]:
    counts: Counter[str] = Counter()
    for r in records:
        for key, value in r.fields.items():
            if key.lower() in SUMMARY_FIELDS and isinstance(value, str):
                counts.update(v.strip() for v in value.replace("|", ",").split(",") if v.strip())
    return [f"{v} {n}" for v, n in counts.most_common(4)]


def _numbers(records: Sequence[BehaviourRecord], keys: tuple[str, ...]) -> list[float]:
    return [
        float(v)
        for r in records
        for k, v in r.fields.items()
        if k.lower() in keys and isinstance(v, int | float) and not isinstance(v, bool)
    ]


def records_summary(user: SafeUser) -> str:
    """The user's own real records in aggregate: no item, merchant, place, date or id.

    Part of the profile prompt, so users without a demographic record still get a profile of
    their own (two users with the same domains differ in what, how much, how rated, when).
    """
    records = user.records
    if not records:
        return "no real records"
    zone = user.zone
    days = {localtime.iso_date(r.timestamp, zone) for r in records}
    weeks = (max(r.timestamp for r in records) - min(r.timestamp for r in records)) // localtime.WEEK_S + 1
    lines = [f"{len(records)} real records on {len(days)} days over {weeks} weeks."]
    for domain in sorted({r.domain for r in records}, key=lambda d: d.value):
        mine = [r for r in records if r.domain is domain]
        kinds = Counter(r.type.value for r in mine)
        parts = [f"{domain.value}: {len(mine)} ({', '.join(f'{k} {n}' for k, n in kinds.most_common())})"]
        if about := _descriptors(mine):
            parts.append("about " + ", ".join(about))
        if ratings := _numbers(mine, ("rating", "stars", "overall", "score")):
            parts.append(f"mean rating {mean(ratings):.1f} of {len(ratings)}")
        if amounts := _numbers(mine, ("amount", "price", "total", "cost")):
            parts.append(f"spent {sum(amounts):.2f} in total, {mean(amounts):.2f} on average")
        lines.append("- " + "; ".join(parts))
    weekdays = Counter(WEEKDAYS[localtime.weekday(r.timestamp, zone)] for r in records)
    lines.append("Busiest weekdays: " + ", ".join(f"{d} {n}" for d, n in weekdays.most_common(3)) + ".")
    timed = user.timed()
    if timed:
        hours = Counter(_part(localtime.hour(r.timestamp, zone)) for r in timed)
        lines.append("Time of day: " + ", ".join(f"{p} {n}" for p, n in hours.most_common()) + ".")
    if len(timed) < len(records):
        lines.append(
            f"The source records only the date of {len(records) - len(timed)} of them (no time of day)."
        )
    return "\n".join(lines)


def _part(hour: int) -> str:
    return "night" if hour < 6 else "morning" if hour < 12 else "afternoon" if hour < 18 else "evening"


def profile_prompt(user: SafeUser, use_anchors: bool) -> str:
    categories = ", ".join(c.value for c in CATEGORIES)
    lines = [
        "Expand this real person's demographic record into a consumer profile.",
        f"Demographic record: {user.demographic.describe()}.",
        f"Pick 3 to 8 interest categories from: {categories}.",
        "For each give an affinity score from 1 (mild) to 5 (strong) and 1 to 4 concrete "
        "preference instances (for example 'Cantonese cuisine' for dining or 'boutique hotels' for hotel).",
        "Then describe the lifestyle in a short phrase each: clothing, food, housing, mobility, spending.",
    ]
    if use_anchors and user.records:
        active = ", ".join(sorted({r.domain.value for r in user.records}))
        lines.append(f"Real logs show this person is active in: {active}; include those categories.")
        # No id or pseudonym here (review U13): two users with identical summaries get one prompt,
        # so their profiles differ only as their records do (the cache then answers both alike).
        lines.append(f"Their real records, summarised:\n{records_summary(user)}")
        lines.append("Write the profile this person's records imply; name no real item, merchant or place.")
    lines.append(
        'JSON shape: {"affinities": [{"category": ..., "score": 4, "preferences": [...]}], '
        '"lifestyle": {"clothing": ..., "food": ..., "housing": ..., "mobility": ..., "spending": ...}}'
    )
    return "\n".join(lines)


def _dedupe(draft: ProfileDraft) -> list[Affinity]:
    """Keep the first entry per category; preference strings stripped and de-duplicated."""
    seen: dict[Category, Affinity] = {}
    for a in draft.affinities:
        prefs = list(dict.fromkeys(p.strip() for p in a.preferences if p.strip()))
        if a.category not in seen and prefs:
            seen[a.category] = Affinity(category=a.category, score=(a.score - 1) / 4, preferences=prefs)
    return list(seen.values())


def _anchor_affinity(user: SafeUser, category: Category) -> Affinity:
    """An affinity the real logs prove but the model left out (the profile must cover real behaviour).

    Its preferences are the records' categories or genres, never their titles: a real title
    would only come out of the release as a redaction token.
    """
    about = [d.rsplit(" ", 1)[0] for d in _descriptors([r for r in user.records if r.domain is category])]
    prefs = about[:3] or [category.value.replace("_", " ")]
    return Affinity(category=category, score=0.5, preferences=list(dict.fromkeys(prefs)))


async def expand_profile(llm: StructuredLLM, user: SafeUser, *, use_anchors: bool = True) -> Profile | None:
    draft = await llm.structured(
        profile_prompt(user, use_anchors),
        ProfileDraft,
        stage="profile",
        key=user.user_id,
        max_tokens=PROFILE_TOKENS,
    )
    if draft is None:
        return None
    affinities = _dedupe(draft)
    if use_anchors:
        present = {a.category for a in affinities}
        for category in sorted({r.domain for r in user.records} - present):
            affinities.append(_anchor_affinity(user, category))
    if not affinities:
        return None
    return Profile(
        user_id=user.user_id,
        demographic=user.demographic,
        affinities=affinities,
        lifestyle=Lifestyle(**draft.lifestyle.model_dump()),
    )
