"""LLM-rated data quality (paper Tables 1 and 9): log plausibility and profile consistency.

Per synthesised user, two structured calls through :class:`StructuredLLM` (cached in
``RUN/cache.sqlite``, so a rerun resumes; failures follow the failure policy):

* plausibility: record, sequence and trajectory level, from the profile, the weekly
  summaries and the records (evenly thinned to ``max_records`` so a 12-week log fits a
  context window);
* profile consistency: affinity coherence, domain consistency, demographic compatibility
  and trajectory-profile fit, from the profile and the weekly summaries only (as the paper).

With queries present, each query is also rated on scenario realism and human-likeness,
so human-LLM agreement on queries (Table 10) has LLM scores to compare with.

``RUN/quality_ratings.jsonl`` holds one line per rated piece (scores, or the error);
``RUN/quality_ratings_run.json`` the model, counts and means. When an annotation sheet was
exported, the LLM's scores on the sampled items are also written in the long rating format
to ``RUN/annotation_llm_ratings.csv`` (rater ``llm:MODEL``), next to the key, not in the
sheet folder handed to raters.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from datetime import tzinfo
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from recworld.lunar import rubric_dims, timeutil
from recworld.lunar.config import DEFAULT_FAIL_ON_ERROR, SessionConfig
from recworld.lunar.llm import StructuredLLM, gather_or_cancel
from recworld.lunar.schemas import BehaviourRecord, Profile, Query, Trajectory

Kind = Literal["plausibility", "profile", "query"]
DIMENSIONS: dict[str, dict[str, str]] = {
    "plausibility": rubric_dims.PLAUSIBILITY,
    "profile": rubric_dims.PROFILE,
    "query": rubric_dims.QUERY,
}
Score = Annotated[int, Field(ge=1, le=5)]
RATINGS_FILE = "quality_ratings.jsonl"
RUN_FILE = "quality_ratings_run.json"
LLM_SHEET_FILE = "annotation_llm_ratings.csv"


class _Draft(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlausibilityScores(_Draft):
    record_plausibility: Score
    sequence_coherence: Score
    trajectory_consistency: Score


class ProfileScores(_Draft):
    affinity_coherence: Score
    domain_consistency: Score
    demographic_compatibility: Score
    trajectory_profile_fit: Score


class QueryScores(_Draft):
    scenario_realism: Score
    human_likeness: Score


OUTPUT: dict[str, type[_Draft]] = {
    "plausibility": PlausibilityScores,
    "profile": ProfileScores,
    "query": QueryScores,
}


class QualityRating(BaseModel):
    """A line of ``quality_ratings.jsonl``; ``scores`` is None exactly when ``error`` says why."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal["recworld.lunar.quality_rating/1"] = Field(
        default="recworld.lunar.quality_rating/1", alias="schema"
    )
    kind: Kind
    subject: str  # user id (plausibility, profile) or query id
    scores: dict[str, int] | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


# -- what the rater sees ---------------------------------------------------------------------------


def week_summaries(trajectory: Trajectory, records: Sequence[BehaviourRecord]) -> list[str]:
    """One line per week: theme, rhythm and what was actually logged."""
    by_week: dict[int, Counter[str]] = {}
    for r in records:
        week = (r.timestamp - trajectory.start_ts) // (7 * 86400)
        by_week.setdefault(int(week), Counter())[f"{r.domain.value}/{r.type.value}"] += 1
    lines = []
    for w in trajectory.weeks:
        logged = by_week.get(w.index, Counter())
        kinds = ", ".join(f"{k} {n}" for k, n in logged.most_common(6)) or "nothing logged"
        lines.append(f"Week {w.index + 1} ({w.start_date}): {w.theme}; rhythm: {w.rhythm}; logged: {kinds}")
    return lines


def thin(records: Sequence[BehaviourRecord], limit: int) -> list[BehaviourRecord]:
    """At most ``limit`` records, evenly spread over the whole span (not only the newest)."""
    ordered = sorted(records, key=lambda r: (r.timestamp, r.record_id))
    if len(ordered) <= limit:
        return ordered
    picks = np.linspace(0, len(ordered) - 1, limit).round().astype(int)
    return [ordered[i] for i in sorted(set(picks.tolist()))]


def _line(record: BehaviourRecord, tz: tzinfo) -> str:
    """A record without its id: ids name the user, and the blind sheet must not."""
    fields = "; ".join(f"{k}={v}" for k, v in sorted(record.fields.items()))
    return (
        f"{timeutil.stamp(record.timestamp, tz)} {record.domain.value}/{record.type.value} {fields}".rstrip()
    )


def history_text(
    profile: Profile, trajectory: Trajectory, records: Sequence[BehaviourRecord], *, max_records: int | None
) -> str:
    """Profile, weekly summaries and (unless ``max_records`` is None) thinned records in local time."""
    tz = timeutil.zone(profile.demographic.timezone)
    parts = [
        f"Profile:\n{profile.describe()}",
        "Weekly summaries:\n" + "\n".join(week_summaries(trajectory, records)),
    ]
    if max_records is not None:
        shown = thin(records, max_records)
        head = f"Records ({len(shown)} of {len(records)}, evenly spread, local time):"
        parts.append(head + "\n" + "\n".join(_line(r, tz) for r in shown))
    return "\n\n".join(parts)


def _prompt(kind: str, body: str) -> str:
    return "\n".join(
        [
            f"Rate the quality of this synthetic data on each dimension, 1 to 5 ({rubric_dims.SCALE_TEXT}).",
            rubric_dims.describe(DIMENSIONS[kind]),
            "",
            body,
            "",
            "Answer with one JSON object holding an integer score per dimension.",
        ]
    )


# -- rating --------------------------------------------------------------------------------------


async def _rate(llm: StructuredLLM, kind: Kind, subject: str, body: str) -> QualityRating:
    value = await llm.structured(
        _prompt(kind, body), OUTPUT[kind], stage=f"rate-{kind}", key=subject, max_tokens=96
    )
    if value is None:
        return QualityRating(
            kind=kind, subject=subject, scores=None, error=llm.error_of(f"rate-{kind}", subject)
        )
    return QualityRating(kind=kind, subject=subject, scores=value.model_dump())


async def rate_all(
    llm: StructuredLLM,
    profiles: Sequence[Profile],
    trajectories: Sequence[Trajectory],
    records: Sequence[BehaviourRecord],
    queries: Sequence[Query],
    *,
    max_records: int,
) -> list[QualityRating]:
    """Every user on plausibility and profile consistency, every query on realism and likeness."""
    plans = {t.user_id: t for t in trajectories}
    records_of: dict[str, list[BehaviourRecord]] = {}
    for r in records:
        records_of.setdefault(r.user_id, []).append(r)
    jobs = []
    for p in profiles:
        if p.user_id not in plans:
            continue
        rows = records_of.get(p.user_id, [])
        full = history_text(p, plans[p.user_id], rows, max_records=max_records)
        jobs.append(_rate(llm, "plausibility", p.user_id, full))
        jobs.append(
            _rate(llm, "profile", p.user_id, history_text(p, plans[p.user_id], rows, max_records=None))
        )
    jobs += [_rate(llm, "query", q.query_id, f"Request: {q.text}") for q in queries]
    return await gather_or_cancel(jobs)


def summary(ratings: Sequence[QualityRating]) -> dict[str, Any]:
    """Means per dimension and the paper's two headline figures (mean of each group's dimensions)."""
    out: dict[str, Any] = {"dimensions": {}, "overall": {}, "rated": {}, "errors": {}}
    for kind, dims in DIMENSIONS.items():
        done = [r.scores for r in ratings if r.kind == kind and r.scores is not None]
        out["rated"][kind] = len(done)
        out["errors"][kind] = sum(1 for r in ratings if r.kind == kind and r.scores is None)
        for dim in dims:
            out["dimensions"][dim] = float(np.mean([s[dim] for s in done])) if done else None
        per_piece = [float(np.mean([s[d] for d in dims])) for s in done]
        out["overall"][kind] = float(np.mean(per_piece)) if per_piece else None
    return out


class RateConfig(BaseModel):
    """``recworld lunar rate``: which folder, which rater model, how much of each log it sees."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root: Path
    llm: SessionConfig
    max_records: int = Field(default=120, ge=1)
    queries: bool = True
    fail_on_error: float = Field(default=DEFAULT_FAIL_ON_ERROR, ge=0.0, le=1.0)


def rate_quality(config: RateConfig) -> dict[str, Any]:
    """Rate a LUNAR folder with an LLM and write the ratings, their summary and the annotation CSV."""
    return asyncio.run(rate_quality_async(config))


async def rate_quality_async(config: RateConfig) -> dict[str, Any]:
    from recworld.io import atomic_write_json, atomic_write_jsonl, atomic_write_text
    from recworld.lunar import annotate, store
    from recworld.lunar.api import check_failures
    from recworld.lunar.llm import failures_json
    from recworld.lunar.session import open_llm

    root = config.root
    queries = store.queries(root) if config.queries and (root / "queries.jsonl").exists() else []
    inputs = (store.profiles(root), store.trajectories(root), store.records(root))
    async with open_llm(config.llm, root) as llm:
        ratings = await rate_all(llm, *inputs, queries, max_records=config.max_records)
    atomic_write_jsonl(root / RATINGS_FILE, [r.to_json() for r in ratings])
    run = {
        "schema": "recworld.lunar.quality_ratings_run/1",
        "model": config.llm.model,
        "max_records": config.max_records,
        "counts": {"asked": llm.asked, "failures": len(llm.failures), "llm_calls": llm.calls},
        "failures": failures_json(llm.failures),
        "summary": summary(ratings),
    }
    atomic_write_json(root / RUN_FILE, run)
    key = annotate.read_key(root) if (root / annotate.KEY_FILE).exists() else None
    if key is not None:
        rows = annotate.llm_rating_rows(key, ratings, f"llm:{config.llm.model}")
        atomic_write_text(root / LLM_SHEET_FILE, annotate.rows_csv(rows))
    check_failures("rate", llm.asked, llm.failures, config.fail_on_error)
    return run
