"""Every statistic against a value worked out by hand."""

from __future__ import annotations

import math

import pytest

from recworld.lunar.localtime import WEEK_S
from recworld.lunar.quality.stats import (
    affinity_entropy,
    cross_week_cosine,
    distribution_counts,
    fidelity,
    jensen_shannon,
    normalised_entropy,
)
from recworld.lunar.schemas import Affinity, BehaviourRecord, Category, Demographic, Lifestyle, Profile


def _rec(user: str, ts: int, kind: str) -> BehaviourRecord:
    return BehaviourRecord(
        record_id=f"{user}{ts}{kind}", user_id=user, timestamp=ts, domain=Category.DINING, type=kind
    )  # type: ignore[arg-type]


def test_cross_week_cosine_by_hand() -> None:
    # Week vectors over (order, ride): w0 = (1, 0), w1 = (1, 1), w2 = (0, 1).
    # cos(w0,w1) = 1/√2, cos(w0,w2) = 0, cos(w1,w2) = 1/√2.
    # all pairs = (2/√2)/3 = √2/3; consecutive = (1/√2 + 1/√2)/2 = 1/√2.
    records = [
        _rec("a", 10, "order"),
        _rec("a", WEEK_S + 5, "order"),
        _rec("a", WEEK_S + 9, "ride"),
        _rec("a", 2 * WEEK_S, "ride"),
    ]
    # A second user with identical weeks 0 and 2 (week 1 empty): all pairs 1, no consecutive pair.
    records += [_rec("b", 100, "order"), _rec("b", 2 * WEEK_S + 100, "order")]
    out = cross_week_cosine(records, {"a": 0, "b": 0})
    assert out["all_pairs"] == pytest.approx((math.sqrt(2) / 3 + 1.0) / 2)
    assert out["consecutive"] == pytest.approx(1 / math.sqrt(2))
    assert cross_week_cosine(records[:1], {"a": 0}) == {"all_pairs": None, "consecutive": None}


def test_normalised_entropy_by_hand() -> None:
    assert normalised_entropy([1, 1, 1, 1]) == pytest.approx(1.0)
    # p = (3/4, 1/4): H = -(.75 ln .75 + .25 ln .25) = 0.562335; / ln 2 = 0.811278
    assert normalised_entropy([3, 1]) == pytest.approx(0.8112781245)
    assert normalised_entropy([5]) == 0.0


def _profile(user: str, dining: list[str], hotel: list[str]) -> Profile:
    return Profile(
        user_id=user,
        demographic=Demographic(user_id=user),
        affinities=[
            Affinity(category=Category.DINING, score=0.5, preferences=dining),
            Affinity(category=Category.HOTEL, score=0.5, preferences=hotel),
        ],
        lifestyle=Lifestyle(clothing="c", food="f", housing="h", mobility="m", spending="s"),
    )


def test_affinity_entropy_weighted_by_unique_entries() -> None:
    # dining entries: ramen×3 (case/space folded), sushi×1 → 0.811278, 2 unique
    # hotel entries: boutique, hostel, resort once each → 1.0, 3 unique
    # weighted = (2·0.811278 + 3·1.0) / 5 = 0.924511
    profiles = [
        _profile("a", ["Ramen", "sushi"], ["boutique"]),
        _profile("b", ["ramen "], ["hostel"]),
        _profile("c", ["ramen"], ["resort"]),
    ]
    out = affinity_entropy(profiles)
    assert out["unique_entries"] == {"dining": 2, "hotel": 3}
    assert out["weighted"] == pytest.approx((2 * 0.8112781245 + 3) / 5)


def test_jensen_shannon_by_hand() -> None:
    assert jensen_shannon({"a": 1}, {"b": 1}) == pytest.approx(1.0)
    assert jensen_shannon({"a": 2, "b": 2}, {"a": 5, "b": 5}) == pytest.approx(0.0)
    # P = (1, 0), Q = (1/2, 1/2), M = (3/4, 1/4):
    # KL(P||M) = log2(4/3) = 0.415037; KL(Q||M) = .5 log2(2/3) + .5 log2(2) = 0.207519
    # JSD = (0.415037 + 0.207519)/2 = 0.311278
    assert jensen_shannon({"a": 1}, {"a": 1, "b": 1}) == pytest.approx(0.3112781245)


def test_fidelity_uses_type_hour_and_weekday() -> None:
    # 1970-01-01 was a Thursday (weekday 3); hour from UTC.
    synthetic = distribution_counts([_rec("a", 3600, "order"), _rec("a", 7200, "ride")])
    real = distribution_counts([_rec("r", 3600, "watch")])
    assert synthetic == {"type": {"order": 1, "ride": 1}, "hour": {"1": 1, "2": 1}, "weekday": {"3": 2}}
    out = fidelity(synthetic, real)
    assert out["type"] == pytest.approx(1.0) and out["weekday"] == pytest.approx(0.0)
    assert out["hour"] == pytest.approx(0.3112781245)
