"""Stage 1, Profile Expanding: a real demographic record becomes a structured profile."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field

from recworld.lunar.anchors import AnchorUser
from recworld.lunar.llm import StructuredLLM
from recworld.lunar.schemas import CATEGORIES, Affinity, Category, Lifestyle, Profile
from recworld.records import Draft

PROFILE_TOKENS = 320  # reply cap of the profile call


class AffinityDraft(Draft):
    category: Category
    # An enum decodes reliably even on tiny models; stored as (score - 1) / 4 in [0, 1].
    score: Literal[1, 2, 3, 4, 5]
    preferences: list[str] = Field(min_length=1, max_length=4)


class LifestyleDraft(Draft):
    clothing: str = Field(min_length=2, max_length=120)
    food: str = Field(min_length=2, max_length=120)
    housing: str = Field(min_length=2, max_length=120)
    mobility: str = Field(min_length=2, max_length=120)
    spending: str = Field(min_length=2, max_length=120)


class ProfileDraft(Draft):
    affinities: list[AffinityDraft] = Field(min_length=3, max_length=8)
    lifestyle: LifestyleDraft


def profile_prompt(user: AnchorUser, use_anchors: bool) -> str:
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


def _anchor_affinity(user: AnchorUser, category: Category) -> Affinity:
    """An affinity the real logs prove but the model left out (the profile must cover real behaviour)."""
    titles = Counter(
        str(r.fields.get("genres") or r.fields.get("title") or category.value)
        for r in user.records
        if r.domain is category
    )
    prefs = [t.split(",")[0].strip() for t, _ in titles.most_common(3)] or [category.value]
    return Affinity(category=category, score=0.5, preferences=list(dict.fromkeys(prefs)))


async def expand_profile(llm: StructuredLLM, user: AnchorUser, *, use_anchors: bool = True) -> Profile | None:
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
