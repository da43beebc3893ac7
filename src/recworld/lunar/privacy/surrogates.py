"""Surrogates: what a prompt sees instead of an identifier.

Invariant: a surrogate is a function of (run key, user, kind, value) only, so one user's
"Dave Miller" is the same invented name in every prompt of the run, another user's is a
different one, and nothing about the real value can be read back from it.

Names and companies come from Faker (seeded per value through an HMAC of the run key);
merchants, places and titles become *category* surrogates ("a grill restaurant in a
waterfront district", "a drama film"): behaviour is kept, identity is not.
"""

from __future__ import annotations

import hashlib
import hmac
from functools import lru_cache
from typing import TYPE_CHECKING

from recworld.lunar.schemas import Category

if TYPE_CHECKING:
    from faker import Faker

VENUES: dict[Category, tuple[str, ...]] = {
    Category.DINING: (
        "a grill restaurant",
        "a noodle bar",
        "a pizzeria",
        "a bistro",
        "a dumpling house",
        "a diner",
    ),
    Category.FOOD_DELIVERY: ("a burger kitchen", "a curry kitchen", "a sushi kitchen", "a salad kitchen"),
    Category.GROCERIES: ("a supermarket", "a corner grocer", "an organic market", "a discount grocer"),
    Category.SHOPPING: ("a department store", "an electronics shop", "a shoe shop", "an online marketplace"),
    Category.AIR_TRAVEL: ("a budget airline", "a full-service airline", "a regional airline"),
    Category.RAIL_TRAVEL: ("an intercity rail line", "a high-speed rail line", "a commuter rail line"),
    Category.HOTEL: ("a business hotel", "a boutique hotel", "a budget hotel", "a resort hotel"),
    Category.LOCAL_TRANSPORT: ("a ride-hailing app", "a taxi firm", "a metro line", "a bike share"),
    Category.MOVIES: ("a multiplex cinema", "an arthouse cinema", "a streaming service"),
    Category.MUSIC: ("a streaming music service", "a concert hall", "a jazz club"),
    Category.FITNESS: ("a chain gym", "a yoga studio", "a climbing gym", "a swimming pool"),
    Category.FINANCE: ("a retail bank", "a payment app", "a credit union", "a brokerage app"),
    Category.JOB_SEEKING: ("a job board", "a recruiting agency", "a professional network"),
}
AREAS = (
    "a waterfront district",
    "a business district",
    "a residential neighbourhood",
    "a shopping district",
    "a university quarter",
    "a suburb",
)
ITEM_NOUNS: dict[Category, str] = {
    Category.MOVIES: "film",
    Category.MUSIC: "album",
    Category.SHOPPING: "product",
    Category.GROCERIES: "grocery item",
    Category.DINING: "dish",
    Category.FOOD_DELIVERY: "dish",
}


def digest(key: bytes, *parts: str) -> int:
    """A 64-bit number from the run key and ``parts`` (HMAC-SHA256): the seed of one surrogate."""
    mac = hmac.new(key, "\x1f".join(parts).encode("utf-8"), hashlib.sha256).digest()
    return int.from_bytes(mac[:8], "big")


@lru_cache(maxsize=1)
def _faker() -> Faker:
    from faker import Faker

    return Faker("en_US")


class Surrogates:
    """One run's surrogates (see the module docstring); every kind keyed by the run key."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self.made: dict[str, set[str]] = {}

    def _note(self, kind: str, value: str) -> str:
        self.made.setdefault(kind, set()).add(value)
        return value

    def person(self, user: str, value: str) -> str:
        fake = _faker()
        fake.seed_instance(digest(self._key, "person", user, " ".join(value.lower().split())))
        return self._note("person", f"{fake.first_name()} {fake.last_name()}")

    def company(self, user: str, value: str) -> str:
        fake = _faker()
        fake.seed_instance(digest(self._key, "company", user, " ".join(value.lower().split())))
        return self._note("company", fake.company())

    def venue(self, user: str, domain: Category, value: str) -> str:
        n = digest(self._key, "venue", user, " ".join(value.lower().split()))
        choices = VENUES[domain]
        return self._note("venue", f"{choices[n % len(choices)]} in {AREAS[(n // 7) % len(AREAS)]}")

    def item(self, domain: Category, about: str | None) -> str:
        noun = ITEM_NOUNS.get(domain, "item")
        kind = (about or domain.value.replace("_", " ")).lower()
        article = "an" if kind[:1] in "aeiou" else "a"
        return self._note("item", f"{article} {kind} {noun}")
