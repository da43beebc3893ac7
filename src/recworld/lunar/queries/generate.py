"""Queries: realistic assistant requests, generated from a seed set of exemplars.

The seeds (``seeds/queries.jsonl``) are requests we wrote by hand, each tagged
with the domains it touches. Each generated query sees a seeded sample of them
as few-shot exemplars, plus the user's profile and the domains their synthetic
logs cover, and must tag itself with domains the user is active in.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from pydantic import Field

from recworld.io import read_models
from recworld.lunar.llm import StructuredLLM, gather_or_cancel
from recworld.lunar.llm.decoding import room
from recworld.lunar.schemas import BehaviourRecord, Category, Profile, Query
from recworld.records import Draft
from recworld.seeding import rng

SHOTS = 5  # exemplars shown per query


class SeedQuery(Draft):
    """A hand-written request of ``seeds/queries.jsonl`` and the domains it touches."""

    text: str = Field(min_length=3)
    domains: list[Category] = Field(min_length=1, json_schema_extra=room(3))


class QueryDraft(Draft):
    text: str = Field(min_length=8, max_length=240)
    domains: list[Category] = Field(min_length=1, max_length=3, json_schema_extra=room(3))


def load_seeds(path: Path | None = None) -> list[SeedQuery]:
    """The seed requests; each bad line raises a DataError naming the file and line."""
    return read_models(
        path or Path(str(resources.files("recworld.lunar.queries") / "seeds" / "queries.jsonl")), SeedQuery
    )


def active_domains(profile: Profile, logged: set[Category]) -> list[Category]:
    """The domains a user's query may touch: those with logged records, else the profile's affinities."""
    return sorted(logged or {a.category for a in profile.affinities})


def exemplars(
    pool: Sequence[SeedQuery], seed: int, user_id: str, k: int, shots: int = SHOTS
) -> list[SeedQuery]:
    """The seeded few-shot sample of query ``k`` of ``user_id``."""
    picks = rng(seed, "lunar", "queries", user_id, k).choice(
        len(pool), size=min(shots, len(pool)), replace=False
    )
    return [pool[i] for i in picks]


def query_prompt(
    profile: Profile, active: Sequence[Category], exemplars: Sequence[SeedQuery], number: int
) -> str:
    shots = "\n".join(f'- "{e.text}" domains: {", ".join(d.value for d in e.domains)}' for e in exemplars)
    return "\n".join(
        [
            "Write one new request this person might send to a personal assistant app.",
            "It should be natural and short, and answering it well should need the person's own history.",
            f"Profile:\n{profile.describe()}",
            f"Domains with logged behaviour: {', '.join(d.value for d in active)}.",
            f"Example requests from real users:\n{shots}",
            f"This is request number {number}; tag it with the 1 to 3 logged domains it touches.",
            # The example names a logged domain: small models copy it (a fixed "dining" failed the check).
            f'JSON shape: {{"text": "...", "domains": ["{active[0].value}"]}}',
        ]
    )


async def generate_queries(
    llm: StructuredLLM,
    profiles: Sequence[Profile],
    records: Sequence[BehaviourRecord],
    *,
    per_user: int = 2,
    seeds: Sequence[SeedQuery] | None = None,
    seed: int = 0,
    shots: int = SHOTS,
) -> list[Query]:
    pool = list(seeds) if seeds is not None else load_seeds()
    by_user: dict[str, set[Category]] = {}
    for r in records:
        by_user.setdefault(r.user_id, set()).add(r.domain)

    async def one(profile: Profile, k: int) -> Query | None:
        active = active_domains(profile, by_user.get(profile.user_id, set()))
        allowed = set(active)

        def check(draft: QueryDraft) -> str | None:
            return (
                None if set(draft.domains) & allowed else f"tag at least one of: {', '.join(sorted(allowed))}"
            )

        draft = await llm.structured(
            query_prompt(profile, active, exemplars(pool, seed, profile.user_id, k, shots), k + 1),
            QueryDraft,
            stage="query",
            key=f"{profile.user_id}/q{k}",
            check=check,
            max_tokens=160,
            # "Tag at least one of the user's domains", enforced where a grammar decodes: the domains
            # array may only hold logged domains (the check stays for backends that ignore the schema).
            enums={"domains": [d.value for d in active]},
        )
        if draft is None:
            return None
        domains = sorted({d for d in draft.domains if d in allowed})
        return Query(
            query_id=f"{profile.user_id}/q{k:03d}",
            user_id=profile.user_id,
            text=draft.text.strip(),
            domains=domains,
            multi_domain=len(domains) > 1,
        )

    made = await gather_or_cancel([one(p, k) for p in profiles for k in range(per_user)])
    return [q for q in made if q is not None]
