"""The three synthesis stages wired together, and the run folder they write.

``RUN/`` after ``recworld lunar synth``::

    dataset/            the release: only these three files (recworld.lunar.synth.release)
      profiles.jsonl      recworld.lunar.profile/1 (de-identified)
      trajectories.jsonl  recworld.lunar.trajectory/1 (with consistency scores per week)
      records.jsonl       recworld.lunar.record/1, synthetic only (anchor copies removed)
    manifest.json       recworld.lunar.manifest/3: config, counts, timings (recworld.lunar.store.outputs)
    real_stats.json     aggregated real distributions (behaviour type, hour, weekday) for JSD
    failures.jsonl      recworld.lunar.failure/1: every piece given up on (keys name source users)
    cache.sqlite        raw model replies (before de-identification): working state, never released

In ``dataset/`` user ids are ``user-NNN`` and no source id or anchor title appears.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import tzinfo
from pathlib import Path

from recworld.io import atomic_write_jsonl
from recworld.lunar import timeutil
from recworld.lunar.anchors import AnchorUser
from recworld.lunar.config import SynthConfig, SynthOptions
from recworld.lunar.llm import StructuredLLM, failures_json, gather_or_cancel
from recworld.lunar.llm.embed import Embedder
from recworld.lunar.quality.stats import distribution_counts, on_synthesised_days
from recworld.lunar.schemas import BehaviourRecord, Profile, Trajectory, WeekPlan
from recworld.lunar.store.dataset import DATASET_DIR
from recworld.lunar.store.outputs import RealStats, SynthCounts, SynthManifest
from recworld.lunar.synth.profile import expand_profile
from recworld.lunar.synth.records import instantiate_week, remove_anchors
from recworld.lunar.synth.release import anonymise
from recworld.lunar.synth.result import SynthResult, UserResult
from recworld.lunar.synth.trajectory import plan_week
from recworld.lunar.synth.validate import review_week
from recworld.lunar.timeutil import WEEK_S


async def _plan_validated_week(
    llm: StructuredLLM,
    profile: Profile,
    user: AnchorUser,
    index: int,
    start_ts: int,
    previous: Sequence[str],
    config: SynthOptions,
    embedder: Embedder | None,
) -> WeekPlan | None:
    """Plan a week; regenerate (bounded) while its combined consistency is below threshold.

    Each regeneration sees the validators' issues with the plan before it. A week whose
    every validation call failed is never accepted: with no plan validated it is dropped
    (None: the manifest's ``weeks`` count falls short and the failed calls are in ``failures.jsonl``).
    """
    best: WeekPlan | None = None
    feedback: tuple[str, ...] = ()
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
            feedback=feedback,
        )
        if week is None:
            continue
        if not config.validate_weeks:
            return week
        review = await review_week(llm, week, f"{profile.user_id}/w{index}/r{variant}", embedder)
        feedback = review.issues
        if review.failed:
            continue
        scores = review.consistency.model_copy(update={"regenerations": variant})
        week = week.model_copy(update={"consistency": scores})
        combined = scores.combined if scores.combined is not None else -1.0
        if best is None or combined > (best.consistency.combined or 0.0):
            best = week
        if combined >= config.consistency_threshold:
            return week
    return best


async def synthesize_user(
    llm: StructuredLLM, user: AnchorUser, config: SynthOptions, embedder: Embedder | None = None
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
    llm: StructuredLLM, anchors: Sequence[AnchorUser], config: SynthOptions, embedder: Embedder | None = None
) -> SynthResult:
    results = await gather_or_cancel([synthesize_user(llm, u, config, embedder) for u in anchors])
    out = SynthResult(anchors=list(anchors))
    for user, result in zip(anchors, results, strict=True):
        if result is None:
            out.dropped_users.append(user.user_id)
        else:
            out.users.append(result)
    return out


def real_reference(result: SynthResult) -> tuple[list[BehaviourRecord], dict[str, tzinfo]]:
    """The real records on the days that were synthesised, and each source user's zone."""
    zones = {u.profile.user_id: timeutil.zone(u.profile.demographic.timezone) for u in result.users}
    kept = [
        r
        for u in result.users
        for r in on_synthesised_days(u.anchors_used, u.trajectory, zones[u.profile.user_id])
    ]
    return kept, zones


def write_dataset(
    out: Path, result: SynthResult, llm: StructuredLLM, config: SynthConfig, started: float
) -> SynthManifest:
    """Write ``out/dataset/`` (the release) and the working state beside it (failures, stats, manifest)."""
    profiles, trajectories, records = anonymise(result)
    real = [r for u in result.users for r in u.anchors_used] or [r for a in result.anchors for r in a.records]
    release = out / DATASET_DIR
    release.mkdir(parents=True, exist_ok=True)
    atomic_write_jsonl(release / "profiles.jsonl", [p.to_json() for p in profiles])
    atomic_write_jsonl(release / "trajectories.jsonl", [t.to_json() for t in trajectories])
    atomic_write_jsonl(release / "records.jsonl", [r.to_json() for r in records])
    atomic_write_jsonl(out / "failures.jsonl", failures_json(llm.failures))
    reference, zones = real_reference(result)
    RealStats(n=len(reference), **distribution_counts(reference, zones)).write(out / "real_stats.json")
    counts = SynthCounts(
        users=len(profiles),
        dropped_users=len(result.dropped_users),
        weeks=sum(len(t.weeks) for t in trajectories),
        slots=sum(len(d.slots) for t in trajectories for w in t.weeks for d in w.days),
        records=len(records),
        anchors_used=len(real),
        asked=llm.asked,
        failures=len(llm.failures),
        llm_calls=llm.calls,
    )
    timings = {"synth_s": round(time.perf_counter() - started, 3)}
    manifest = SynthManifest(config=config, counts=counts, timings=timings)
    manifest.write(out / "manifest.json")
    return manifest
