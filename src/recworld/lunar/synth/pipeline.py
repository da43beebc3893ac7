"""The three synthesis stages wired together, and the run folder they write.

``RUN/`` after ``recworld lunar synth``::

    dataset/            the release: only these three files, through the release gate
      profiles.jsonl      recworld.lunar.profile/1 (coarse demographics, de-identified text)
      trajectories.jsonl  recworld.lunar.trajectory/1 (with consistency scores per week)
      records.jsonl       recworld.lunar.record/1, synthetic only (anchor copies dropped)
    manifest.json       recworld.lunar.manifest/4: config, counts, timings, the gate's leak scan
    real_stats.json     aggregated real distributions (behaviour type, hour, weekday) for JSD
    failures.jsonl      recworld.lunar.failure/1: every piece given up on (pseudonymous keys, masked)
    recworld.log        the run's log (masked by the same scanner)
    cache.sqlite        raw model replies (before de-identification): working state, never released

Synthesis runs on pseudonymised anchors (``user-NNN``, prompt-safe demographics), so no
key, record id, failure or log line names a source user. The release gate
(:mod:`recworld.lunar.synth.release`) decides what reaches ``dataset/``; the run's leak
scanner (:mod:`recworld.lunar.leaks`) masks failures and, in ``api.synthesize``, the log.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import tzinfo
from pathlib import Path

from recworld.io import atomic_write_jsonl
from recworld.lunar import timeutil
from recworld.lunar.anchors import AnchorUser
from recworld.lunar.anchors.user import pseudonymised
from recworld.lunar.config import SynthConfig, SynthOptions
from recworld.lunar.leaks import Scanner
from recworld.lunar.llm import StructuredLLM, failures_json, gather_or_cancel
from recworld.lunar.llm.embed import Embedder
from recworld.lunar.quality.stats import distribution_counts, on_synthesised_days
from recworld.lunar.schemas import BehaviourRecord, Profile, Trajectory, WeekPlan
from recworld.lunar.store.dataset import DATASET_DIR
from recworld.lunar.store.outputs import LeakKind, RealStats, ReleaseReport, SynthCounts, SynthManifest
from recworld.lunar.synth.profile import expand_profile
from recworld.lunar.synth.records import instantiate_week, remove_anchors
from recworld.lunar.synth.release import Release, release
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
    copies: list[tuple[BehaviourRecord, str]] = []
    kept = remove_anchors(records, user.records, copies)
    trajectory = Trajectory(user_id=profile.user_id, start_ts=start_ts, weeks=weeks)
    ordered = sorted(kept, key=lambda r: (r.timestamp, r.record_id))
    return UserResult(profile, trajectory, ordered, span, copies)


def scanner_of(anchors: Sequence[AnchorUser]) -> Scanner:
    """The leak scanner of a run: every string, number and date of its anchors as read."""
    return Scanner.of((a.user_id, a.demographic, a.records) for a in anchors)


async def synthesize(
    llm: StructuredLLM,
    anchors: Sequence[AnchorUser],
    config: SynthOptions,
    embedder: Embedder | None = None,
    scanner: Scanner | None = None,
) -> SynthResult:
    """Synthesise every anchor user, under pseudonyms; failures are masked by the run's scanner."""
    scanner = scanner or scanner_of(anchors)
    llm.redact_failures(scanner.mask)
    users, _ = pseudonymised(anchors)
    results = await gather_or_cancel([synthesize_user(llm, u, config, embedder) for u in users])
    out = SynthResult(anchors=users, sources=list(anchors), scanner=scanner)
    for user, result in zip(users, results, strict=True):
        if result is None:
            out.dropped_users.append(user.user_id)
        else:
            out.users.append(result)
    return out


def real_reference(result: SynthResult) -> tuple[list[BehaviourRecord], dict[str, tzinfo]]:
    """The real records on the days that were synthesised, and each user's zone."""
    zones = {u.profile.user_id: timeutil.zone(u.profile.demographic.timezone) for u in result.users}
    kept = [
        r
        for u in result.users
        for r in on_synthesised_days(u.anchors_used, u.trajectory, zones[u.profile.user_id])
    ]
    return kept, zones


def real_stats(result: SynthResult) -> RealStats:
    """The JSD reference; hours only from records whose time of day the source knows."""
    reference, zones = real_reference(result)
    dated = {rid for a in result.anchors for rid in a.day_only}
    timed = [r for r in reference if r.record_id not in dated]
    counts = distribution_counts(reference, zones)
    counts["hour"] = distribution_counts(timed, zones)["hour"]
    return RealStats(n=len(reference), hour_n=len(timed), day_only=len(reference) - len(timed), **counts)


def release_report(result: SynthResult, done: Release) -> ReleaseReport:
    counts = done.gate.scanner.counts
    kinds = sorted(set(counts.strings) | set(counts.redacted) | set(counts.dropped))
    leak_scan = {
        k: LeakKind(
            strings=counts.strings[k],
            redacted=counts.redacted[k],
            dropped=counts.dropped[k],
            released=done.released[k],
        )
        for k in kinds
    }
    demo = [a.demographic for a in result.sources or result.anchors]
    known = sum(
        any(v is not None for v in (d.age, d.gender, d.occupation, d.location)) or bool(d.extra) for d in demo
    )
    return ReleaseReport(
        leak_scan=leak_scan,
        not_allowlisted=dict(done.gate.dropped_fields),
        texts_with_moved_dates=done.gate.dates_moved,
        demographics={"record": known, "none": len(demo) - known, "drawn": 0},
        day_only_anchors=sum(len(a.day_only) for a in result.anchors),
    )


def write_dataset(
    out: Path, result: SynthResult, llm: StructuredLLM, config: SynthConfig, started: float
) -> SynthManifest:
    """Write ``out/dataset/`` (the release) and the working state beside it (failures, stats, manifest).

    The release gate runs over everything before the first file of ``dataset/`` is written.
    """
    done = release(result)
    real = [r for u in result.users for r in u.anchors_used] or [r for a in result.anchors for r in a.records]
    folder = out / DATASET_DIR
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_jsonl(folder / "profiles.jsonl", done.profiles)
    atomic_write_jsonl(folder / "trajectories.jsonl", done.trajectories)
    atomic_write_jsonl(folder / "records.jsonl", done.records)
    atomic_write_jsonl(out / "failures.jsonl", failures_json(llm.failures))
    real_stats(result).write(out / "real_stats.json")
    trajectories = done.trajectories
    counts = SynthCounts(
        users=len(done.profiles),
        dropped_users=len(result.dropped_users),
        weeks=sum(len(t["weeks"]) for t in trajectories),
        slots=sum(len(d["slots"]) for t in trajectories for w in t["weeks"] for d in w["days"]),
        records=len(done.records),
        anchors_used=len(real),
        asked=llm.asked,
        failures=len(llm.failures),
        llm_calls=llm.calls,
    )
    timings = {"synth_s": round(time.perf_counter() - started, 3)}
    report = release_report(result, done)
    manifest = SynthManifest(config=config, counts=counts, timings=timings, release=report)
    manifest.write(out / "manifest.json")
    return manifest
