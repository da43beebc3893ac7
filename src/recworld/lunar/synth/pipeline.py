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

Synthesis runs on sanitised anchors (:mod:`recworld.lunar.privacy`: ``user-NNN``, typed
columns, surrogates, secretly shifted times), so no prompt, key, record id, failure or log
line holds a direct identifier. The release gate
(:mod:`recworld.lunar.synth.release`) decides what reaches ``dataset/``; the run's leak
scanner (:mod:`recworld.lunar.leaks`) masks failures and, in ``api.synthesize``, the log.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import tzinfo
from pathlib import Path
from typing import Any

from recworld.io import atomic_write_jsonl, atomic_write_text
from recworld.lunar import localtime
from recworld.lunar.anchors import AnchorUser
from recworld.lunar.config import SynthConfig, SynthOptions
from recworld.lunar.leaks import Scanner
from recworld.lunar.llm import StructuredLLM, failures_json, gather_or_cancel
from recworld.lunar.privacy import SafeUser, publish, run_key, sanitise
from recworld.lunar.privacy.attack import RiskReport
from recworld.lunar.privacy.publish import CARD_FILE
from recworld.lunar.quality.stats import distribution_counts, on_synthesised_days
from recworld.lunar.schemas import BehaviourRecord, Profile, Trajectory, WeekPlan
from recworld.lunar.store.dataset import DATASET_DIR
from recworld.lunar.store.outputs import (
    LeakKind,
    PrivacyReport,
    RealStats,
    ReleaseReport,
    SynthCounts,
    SynthManifest,
)
from recworld.lunar.synth.profile import expand_profile
from recworld.lunar.synth.records import instantiate_week, remove_anchors
from recworld.lunar.synth.release import Release, release
from recworld.lunar.synth.result import SynthResult, UserResult
from recworld.lunar.synth.trajectory import plan_week
from recworld.lunar.synth.validate import review_week
from recworld.runner import BlockingEmbedder
from recworld.seeding import child_seed


async def _plan_validated_week(
    llm: StructuredLLM,
    profile: Profile,
    user: SafeUser,
    index: int,
    start_ts: int,
    previous: Sequence[str],
    config: SynthOptions,
    embedder: BlockingEmbedder | None,
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
    llm: StructuredLLM, user: SafeUser, config: SynthOptions, embedder: BlockingEmbedder | None = None
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
    span = user.within(start_ts, localtime.day_start(start_ts, config.weeks * 7, user.zone))
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
    embedder: BlockingEmbedder | None = None,
    scanner: Scanner | None = None,
    key: bytes | None = None,
) -> SynthResult:
    """Synthesise every anchor user, sanitised (:func:`~recworld.lunar.privacy.sanitise`) under the run key.

    Failures are masked by the run's scanner. ``key`` None: a fresh random key (discarded).
    """
    scanner = scanner or scanner_of(anchors)
    llm.redact_failures(scanner.mask)
    users, columns, _ = sanitise(anchors, run_key(None) if key is None else key)
    results = await gather_or_cancel([synthesize_user(llm, u, config, embedder) for u in users])
    out = SynthResult(anchors=users, sources=list(anchors), scanner=scanner, shifted=True, columns=columns)
    for user, result in zip(users, results, strict=True):
        if result is None:
            out.dropped_users.append(user.user_id)
        else:
            out.users.append(result)
    return out


def real_reference(result: SynthResult) -> tuple[list[BehaviourRecord], dict[str, tzinfo]]:
    """The real records on the days that were synthesised, and each user's zone."""
    zones = {u.profile.user_id: localtime.zone(u.profile.demographic.timezone) for u in result.users}
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


def privacy_report(
    out: Path, result: SynthResult, done: Release, failures: list[Any], config: SynthConfig
) -> PrivacyReport:
    """The independent scan of everything to be released, and Anonymeter's risks.

    See :mod:`recworld.lunar.privacy.publish`.
    """
    docs = {
        "profiles.jsonl": done.profiles,
        "trajectories.jsonl": done.trajectories,
        "records.jsonl": done.records,
        "failures.jsonl": failures,
    }
    found = publish.findings(result.sources, docs, [out / "recworld.log"])
    risks = release_risks(result, done, config)
    why = publish.verdict(found, risks, config.accept_risk)
    return PrivacyReport(
        columns=result.columns.summary(),
        findings=[str(f) for f in found],
        risks=risks,
        published=why is None,
        why_not=why,
    )


def release_risks(result: SynthResult, done: Release, config: SynthConfig) -> RiskReport:
    """Anonymeter's risks of the release: anchors shown as original, the rest of the anchors as control.

    The attacks' draws come from the run's seed (``config.seed``), so one seed gives one card.
    """
    used = [r for u in result.users for r in u.anchors_used]
    seen = {r.record_id for r in used}
    control = [r for a in result.anchors for r in a.records if r.record_id not in seen]
    zones = {a.user_id: a.zone for a in result.anchors}
    seed = child_seed(config.seed, "lunar", "anonymeter")
    return publish.risks(used, control, done.records, zones, config.max_risk, seed=seed)


def write_dataset(
    out: Path, result: SynthResult, llm: StructuredLLM, config: SynthConfig, started: float
) -> SynthManifest:
    """Write ``out/dataset/`` (the release) and the working state beside it (failures, stats, manifest).

    The release gate runs over everything, then the independent scanner and the attacks
    (:func:`privacy_report`); ``dataset/`` is written only when they pass, else
    :class:`~recworld.lunar.privacy.publish.ReleaseRefusedError` is raised after the manifest is written.
    """
    done = release(result)
    failures = failures_json(llm.failures)
    real = [r for u in result.users for r in u.anchors_used] or [r for a in result.anchors for r in a.records]
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
    privacy = privacy_report(out, result, done, failures, config)
    report = release_report(result, done).model_copy(update={"privacy": privacy})
    manifest = SynthManifest(config=config, counts=counts, timings=timings, release=report)
    if found := publish.scan_text(result.sources, manifest.model_dump_json(), "manifest.json"):
        why = f"the independent scanner found anchor values in the manifest: {found[0]}"
        privacy = privacy.model_copy(update={"published": False, "why_not": why})
        manifest = manifest.model_copy(update={"release": report.model_copy(update={"privacy": privacy})})
    if privacy.published:
        folder = out / DATASET_DIR
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_jsonl(folder / "profiles.jsonl", done.profiles)
        atomic_write_jsonl(folder / "trajectories.jsonl", done.trajectories)
        atomic_write_jsonl(folder / "records.jsonl", done.records)
    atomic_write_jsonl(out / "failures.jsonl", failures)
    real_stats(result).write(out / "real_stats.json")
    manifest.write(out / "manifest.json")
    atomic_write_text(out / CARD_FILE, publish.card(privacy))
    if not privacy.published:
        raise publish.ReleaseRefusedError(f"dataset/ not written: {privacy.why_not}")
    return manifest
