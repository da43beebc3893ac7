"""The three synthesis stages wired together, and the dataset folder they write.

``DIR/`` after ``recworld lunar synth``::

    manifest.json       recworld.lunar.manifest/1: config, counts, failures, timings
    profiles.jsonl      recworld.lunar.profile/1 (de-identified)
    trajectories.jsonl  recworld.lunar.trajectory/1 (with consistency scores per week)
    records.jsonl       recworld.lunar.record/1, synthetic only (anchors removed)
    real_stats.json     aggregated real distributions (behaviour type, hour, weekday) for JSD
    failures.jsonl      every piece given up on after bounded retries

User ids are replaced by ``user-NNN`` so no source id leaves the run.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from recworld.io import atomic_write_json, atomic_write_jsonl
from recworld.lunar.anchors import WEEK_S, AnchorUser
from recworld.lunar.deid import Deidentifier
from recworld.lunar.embed import Embedder
from recworld.lunar.llm import StructuredLLM, failures_json
from recworld.lunar.schemas import BehaviourRecord, Profile, Trajectory, WeekPlan
from recworld.lunar.synth.profile import expand_profile
from recworld.lunar.synth.records import instantiate_week, remove_anchors
from recworld.lunar.synth.trajectory import plan_week
from recworld.lunar.synth.validate import validate_week

MANIFEST_SCHEMA = "recworld.lunar.manifest/1"


class SynthConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    weeks: int = Field(default=2, ge=1, le=52)
    max_slots_per_day: int = Field(default=4, ge=1, le=6)
    # Days of each week that get slot plans and records (the first N); 7 = all. Tiny runs use 1.
    active_days: int = Field(default=7, ge=1, le=7)
    max_records_per_slot: int = Field(default=3, ge=1, le=6)
    max_attempts: int = Field(default=3, ge=1, le=10)
    consistency_threshold: float = Field(default=0.6, ge=0.0, le=1.0)
    max_regenerations: int = Field(default=1, ge=0, le=5)
    validate_weeks: bool = True
    use_anchors: bool = True
    seed: int = 0


@dataclass
class UserResult:
    profile: Profile
    trajectory: Trajectory
    records: list[BehaviourRecord]
    anchors_used: list[BehaviourRecord]


@dataclass
class SynthResult:
    users: list[UserResult] = field(default_factory=list)
    anchors: list[AnchorUser] = field(default_factory=list)
    dropped_users: list[str] = field(default_factory=list)


async def _plan_validated_week(
    llm: StructuredLLM,
    profile: Profile,
    user: AnchorUser,
    index: int,
    start_ts: int,
    previous: Sequence[str],
    config: SynthConfig,
    embedder: Embedder | None,
) -> WeekPlan | None:
    """Plan a week; regenerate (bounded) while its combined consistency is below threshold."""
    best: WeekPlan | None = None
    for variant in range(config.max_regenerations + 1):
        week = await plan_week(
            llm,
            profile,
            user,
            index=index,
            start_ts=start_ts,
            previous_themes=previous,
            use_anchors=config.use_anchors,
            max_slots=config.max_slots_per_day,
            variant=variant,
            active_days=config.active_days,
        )
        if week is None:
            continue
        if not config.validate_weeks:
            return week
        scores = await validate_week(llm, week, f"{profile.user_id}/w{index}/r{variant}", embedder)
        week = week.model_copy(update={"consistency": scores.model_copy(update={"regenerations": variant})})
        best_score = -1.0 if best is None or best.consistency.combined is None else best.consistency.combined
        if best is None or (scores.combined is not None and scores.combined > best_score):
            best = week
        if scores.combined is None or scores.combined >= config.consistency_threshold:
            return week
    return best


async def synthesize_user(
    llm: StructuredLLM, user: AnchorUser, config: SynthConfig, embedder: Embedder | None = None
) -> UserResult | None:
    profile = await expand_profile(llm, user, use_anchors=config.use_anchors)
    if profile is None:
        return None
    start_ts = user.start_ts()
    weeks: list[WeekPlan] = []
    records: list[BehaviourRecord] = []
    for index in range(config.weeks):
        week = await _plan_validated_week(
            llm, profile, user, index, start_ts, [w.theme for w in weeks], config, embedder
        )
        if week is None:
            continue
        weeks.append(week)
        records += await instantiate_week(
            llm,
            profile,
            user,
            week,
            start_ts=start_ts,
            use_anchors=config.use_anchors,
            max_records=config.max_records_per_slot,
        )
    span = user.within(start_ts, start_ts + config.weeks * WEEK_S)
    kept = remove_anchors(records, span)
    trajectory = Trajectory(user_id=profile.user_id, start_ts=start_ts, weeks=weeks)
    return UserResult(profile, trajectory, sorted(kept, key=lambda r: (r.timestamp, r.record_id)), span)


async def synthesize(
    llm: StructuredLLM, anchors: Sequence[AnchorUser], config: SynthConfig, embedder: Embedder | None = None
) -> SynthResult:
    results = await asyncio.gather(*(synthesize_user(llm, u, config, embedder) for u in anchors))
    out = SynthResult(anchors=list(anchors))
    for user, result in zip(anchors, results, strict=True):
        if result is None:
            out.dropped_users.append(user.user_id)
        else:
            out.users.append(result)
    return out


def distribution_counts(records: Sequence[BehaviourRecord]) -> dict[str, dict[str, int]]:
    """Counts of behaviour type, hour of day and weekday (UTC): the JSD inputs."""
    stamps = [datetime.fromtimestamp(r.timestamp, UTC) for r in records]
    return {
        "type": dict(Counter(r.type.value for r in records)),
        "hour": dict(Counter(str(t.hour) for t in stamps)),
        "weekday": dict(Counter(str(t.weekday()) for t in stamps)),
    }


def anonymise(result: SynthResult) -> tuple[list[Profile], list[Trajectory], list[BehaviourRecord]]:
    """Replace source user ids with ``user-NNN`` and de-identify every text (records first, so
    names found in record fields are also replaced in profiles and plans)."""
    deid = Deidentifier()
    profiles, trajectories, records = [], [], []
    for n, user in enumerate(result.users):
        anon = f"user-{n:03d}"
        for r in user.records:
            clean = deid.record(r)
            records.append(
                clean.model_copy(
                    update={"user_id": anon, "record_id": clean.record_id.replace(r.user_id, anon, 1)}
                )
            )
        demo = user.profile.demographic.model_copy(update={"user_id": anon})
        profiles.append(deid.profile(user.profile.model_copy(update={"user_id": anon, "demographic": demo})))
        trajectories.append(deid.trajectory(user.trajectory.model_copy(update={"user_id": anon})))
    return profiles, trajectories, records


def write_dataset(
    out: Path,
    result: SynthResult,
    llm: StructuredLLM,
    config: SynthConfig,
    extra: dict[str, Any],
    started: float,
) -> dict[str, Any]:
    profiles, trajectories, records = anonymise(result)
    real = [r for u in result.users for r in u.anchors_used] or [r for a in result.anchors for r in a.records]
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_jsonl(out / "profiles.jsonl", [p.to_json() for p in profiles])
    atomic_write_jsonl(out / "trajectories.jsonl", [t.to_json() for t in trajectories])
    atomic_write_jsonl(out / "records.jsonl", [r.to_json() for r in records])
    atomic_write_jsonl(out / "failures.jsonl", failures_json(llm.failures))
    atomic_write_json(
        out / "real_stats.json",
        {"schema": "recworld.lunar.real_stats/1", "n": len(real), **distribution_counts(real)},
    )
    manifest = {
        "schema": MANIFEST_SCHEMA,
        "config": config.model_dump(mode="json"),
        "counts": {
            "users": len(profiles),
            "dropped_users": len(result.dropped_users),
            "weeks": sum(len(t.weeks) for t in trajectories),
            "slots": sum(len(d.slots) for t in trajectories for w in t.weeks for d in w.days),
            "records": len(records),
            "anchors_used": len(real),
            "failures": len(llm.failures),
            "llm_calls": llm.calls,
        },
        "timings": {"synth_s": round(time.perf_counter() - started, 3)},
        "created_by": "recworld lunar synth",
        **extra,
    }
    atomic_write_json(out / "manifest.json", manifest)
    return manifest
