"""Statistical data quality (no LLM): stability, diversity and fidelity.

* Cross-week stability: per user, bucket records by trajectory week, build a
  frequency vector over behaviour types per week, and average the cosine over
  all week pairs (long-range) and over consecutive weeks (short-range); weeks
  with no records are skipped, users with fewer than two such weeks too.
  The figure is the mean over users.
* Affinity diversity: all preference entries of all profiles grouped by tier-1
  category; per category the Shannon entropy of the distinct entries'
  frequencies divided by log(number of distinct entries) (0 when there is one
  entry); the average over categories weighted by their distinct-entry counts.
* Fidelity: Jensen–Shannon divergence (base 2, so in [0, 1]) between the
  synthetic and the real distribution of behaviour type, hour of day and weekday.
  Hours and weekdays are local to each user (:mod:`recworld.lunar.localtime`), and the
  real side keeps only the days that were synthesised (days with slot plans): real
  events on days the synthesis skipped (``--active-days`` < 7) would otherwise inflate
  the weekday JSD by construction.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, tzinfo
from itertools import combinations

import numpy as np

from recworld.lunar import localtime
from recworld.lunar.localtime import WEEK_S
from recworld.lunar.schemas import BehaviourRecord, Profile, Trajectory


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b) / float(np.linalg.norm(a) * np.linalg.norm(b))


def week_vectors(
    records: Sequence[BehaviourRecord], start_ts: int, vocabulary: Sequence[str]
) -> dict[int, np.ndarray]:
    index = {t: i for i, t in enumerate(vocabulary)}
    out: dict[int, np.ndarray] = {}
    for r in records:
        week = (r.timestamp - start_ts) // WEEK_S
        vec = out.setdefault(int(week), np.zeros(len(vocabulary)))
        vec[index[r.type.value]] += 1
    return out


def cross_week_cosine(
    records: Sequence[BehaviourRecord], starts: Mapping[str, int]
) -> dict[str, float | None]:
    """Mean all-pairs and consecutive-week cosine of behaviour-type frequency vectors."""
    vocabulary = sorted({r.type.value for r in records})
    by_user: dict[str, list[BehaviourRecord]] = {}
    for r in records:
        by_user.setdefault(r.user_id, []).append(r)
    all_pairs: list[float] = []
    consecutive: list[float] = []
    for user, rows in sorted(by_user.items()):
        vectors = week_vectors(rows, starts[user], vocabulary)
        weeks = sorted(vectors)
        if len(weeks) < 2:
            continue
        all_pairs.append(float(np.mean([_cos(vectors[a], vectors[b]) for a, b in combinations(weeks, 2)])))
        steps = [_cos(vectors[a], vectors[a + 1]) for a in weeks if a + 1 in vectors]
        if steps:
            consecutive.append(float(np.mean(steps)))
    return {
        "all_pairs": float(np.mean(all_pairs)) if all_pairs else None,
        "consecutive": float(np.mean(consecutive)) if consecutive else None,
    }


def normalised_entropy(counts: Sequence[int]) -> float:
    k = len(counts)
    if k < 2:
        return 0.0
    total = float(sum(counts))
    h = -sum((c / total) * math.log(c / total) for c in counts if c > 0)
    return h / math.log(k)


def affinity_entropy(profiles: Sequence[Profile]) -> dict[str, object]:
    """Per-category normalised entropy and the distinct-entry-weighted average."""
    entries: dict[str, Counter[str]] = {}
    for p in profiles:
        for a in p.affinities:
            entries.setdefault(a.category.value, Counter()).update(x.strip().lower() for x in a.preferences)
    per_category = {c: normalised_entropy(list(n.values())) for c, n in sorted(entries.items())}
    weights = {c: len(n) for c, n in entries.items()}
    total = sum(weights.values())
    weighted = sum(per_category[c] * weights[c] for c in per_category) / total if total else None
    return {"weighted": weighted, "per_category": per_category, "unique_entries": weights}


def jensen_shannon(p: Mapping[str, float], q: Mapping[str, float]) -> float:
    """JSD in bits between two count/probability maps over the union of their keys."""
    keys = sorted(set(p) | set(q))
    a = np.array([float(p.get(k, 0.0)) for k in keys])
    b = np.array([float(q.get(k, 0.0)) for k in keys])
    if a.sum() == 0 or b.sum() == 0:
        raise ValueError("both distributions need some mass")
    a, b = a / a.sum(), b / b.sum()
    m = (a + b) / 2

    def kl(x: np.ndarray) -> float:
        mask = x > 0
        return float(np.sum(x[mask] * np.log2(x[mask] / m[mask])))

    return 0.5 * kl(a) + 0.5 * kl(b)


def fidelity(
    synthetic: Mapping[str, Mapping[str, int]], real: Mapping[str, Mapping[str, int]]
) -> dict[str, float | None]:
    """JSD per dimension (type, hour, weekday) between synthetic and real counts."""
    out: dict[str, float | None] = {}
    for dim in ("type", "hour", "weekday"):
        s, r = synthetic.get(dim, {}), real.get(dim, {})
        out[dim] = jensen_shannon(s, r) if sum(s.values()) and sum(r.values()) else None
    return out


def distribution_counts(
    records: Sequence[BehaviourRecord], zones: Mapping[str, tzinfo] | None = None
) -> dict[str, dict[str, int]]:
    """Counts of behaviour type, local hour of day and local weekday (0 = Monday): the JSD inputs.

    ``zones`` maps a user id to its zone; users not in it are read in UTC.
    """
    zones = zones or {}
    hours: Counter[str] = Counter()
    weekdays: Counter[str] = Counter()
    for r in records:
        moment = localtime.local(r.timestamp, zones.get(r.user_id, UTC))
        hours[str(moment.hour)] += 1
        weekdays[str(moment.weekday())] += 1
    return {
        "type": dict(Counter(r.type.value for r in records)),
        "hour": dict(hours),
        "weekday": dict(weekdays),
    }


def synthesised_days(trajectory: Trajectory, tz: tzinfo = UTC) -> list[tuple[int, int]]:
    """[start, end) of every local day that got slot plans: the days the synthesis covered."""
    out = []
    for week in trajectory.weeks:
        for d, day in enumerate(week.days):
            if day.slots:
                n = week.index * 7 + d
                out.append(
                    (
                        localtime.day_start(trajectory.start_ts, n, tz),
                        localtime.day_start(trajectory.start_ts, n + 1, tz),
                    )
                )
    return out


def on_synthesised_days(
    records: Sequence[BehaviourRecord], trajectory: Trajectory, tz: tzinfo = UTC
) -> list[BehaviourRecord]:
    """The records that fall on a synthesised day (the real side of the JSD)."""
    windows = synthesised_days(trajectory, tz)
    return [r for r in records if any(lo <= r.timestamp < hi for lo, hi in windows)]
