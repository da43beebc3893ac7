"""Scores, intervals, miss rates and position bias from ``samples.jsonl`` records.

A measure's score is the share of its scored questions answered correctly:
accuracy for ``mcq`` questions, HitRatio@1 for ``hit@1`` ones (one positive
among ten, so the top pick is either the positive or not). A miss (no choice
could be read) counts as wrong, as in the paper. A sample whose request failed
is an error, not a wrong answer: it is left out of scores, intervals and miss
rates, and counted in ``errors``. A measure (or a whole run) with no scored
sample has no score (null), never 0.

Intervals are 95% percentile bootstrap intervals over questions. Factor, scale
and overall scores are macro averages over measures (each measure weighs the
same, whatever its size); their intervals resample questions within each
measure (stratified), reusing each measure's replicates so that a group's
interval is consistent with its members'.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from recworld.errors import DataError, from_validation
from recworld.io import read_models
from recworld.lrworld.catalogue import MEASURES, MEASURES_BY_ID
from recworld.lrworld.schema import QuestionFormat
from recworld.scoring.bootstrap import CONFIDENCE, N_RESAMPLES, bootstrap_means, percentile_ci
from recworld.scoring.ranking import ranking_metrics
from recworld.scoring.records import (
    METRICS_SCHEMA,
    PAIRED_SCHEMA,
    GroupMetrics,
    MeasureMetrics,
    MetricsRecord,
    PairedDifference,
    PairedMeasure,
    PairedRecord,
    PositionBias,
    PositionCounts,
    SampleRecord,
)
from recworld.seeding import rng

_ORDER = {m.id: i for i, m in enumerate(MEASURES)}

SampleLike = SampleRecord | Mapping[str, Any]

__all__ = [
    "METRICS_SCHEMA",
    "PAIRED_SCHEMA",
    "compute_metrics",
    "load_samples",
    "paired_comparison",
    "score_samples",
]


def _as_record(record: SampleLike, where: int) -> SampleRecord:
    """A typed sample; ``where`` is its 1-based position (its line in samples.jsonl)."""
    if isinstance(record, SampleRecord):
        return record
    if not isinstance(record, Mapping):
        raise DataError(f"sample {where} is not a JSON object")
    try:
        return SampleRecord.model_validate(record)
    except ValidationError as exc:
        error = from_validation(exc)
        raise DataError(f"sample {where}: {error.detail}", field=error.field) from None


def load_samples(path: str | Path) -> list[SampleRecord]:
    """Read ``samples.jsonl``; a bad line raises :class:`DataError` naming file, line and field."""
    target = Path(path)
    if not target.is_file():
        raise DataError("samples file not found", path=target)
    return read_models(target, SampleRecord)


def _group(samples: Sequence[SampleLike]) -> dict[str, list[SampleRecord]]:
    by_measure: dict[str, list[SampleRecord]] = {}
    seen: set[tuple[str, str]] = set()
    for where, record in enumerate(samples, start=1):
        sample = _as_record(record, where)
        key = (sample.measure, sample.question_id)
        if key in seen:
            raise DataError(
                f"sample {where}: question {sample.question_id!r} appears twice", field="question_id"
            )
        seen.add(key)
        group = by_measure.setdefault(sample.measure, [])
        if group and (group[0].format is not sample.format or group[0].labels != sample.labels):
            raise DataError(
                f"sample {where}: measure {sample.measure!r} mixes formats or label sets", field="labels"
            )
        group.append(sample)
    return dict(sorted(by_measure.items(), key=lambda kv: (_ORDER.get(kv[0], len(_ORDER)), kv[0])))


def _only(values: Iterable[str | None], key: str) -> str | None:
    """The one value every sample has for ``key`` (None when there are no samples)."""
    distinct = {json.dumps(v) for v in values}
    if len(distinct) > 1:
        raise DataError(f"samples mix several values of {key!r}: {sorted(distinct)}", field=key)
    return json.loads(distinct.pop()) if distinct else None


def _interval(reps: NDArray[np.float64] | None) -> tuple[float | None, float | None]:
    ci = None if reps is None else percentile_ci(reps, CONFIDENCE)
    return (None, None) if ci is None else ci


def _positions(group: Sequence[SampleRecord], n_options: int) -> PositionCounts:
    scored = [s for s in group if s.scored]
    gold = np.bincount([s.answer_index for s in scored], minlength=n_options)
    parsed = np.bincount([s.parsed_index for s in scored if s.parsed_index is not None], minlength=n_options)
    hits = np.bincount([s.answer_index for s in scored if s.hit], minlength=n_options)
    return PositionCounts(gold=gold.tolist(), parsed=parsed.tolist(), hits=hits.tolist())


def _bias_summary(labels: Sequence[str], hist: PositionCounts) -> PositionBias:
    gold = np.asarray(hist.gold, dtype=np.float64)
    parsed = np.asarray(hist.parsed, dtype=np.float64)
    top_label, top_share, tv_distance = None, None, None
    if parsed.sum() > 0:
        p_parsed = parsed / parsed.sum()
        p_gold = gold / gold.sum()
        top = int(np.argmax(p_parsed))
        top_label, top_share = labels[top], float(p_parsed[top])
        # Total variation between where the model points and where the answers are: 0 = no bias.
        tv_distance = float(0.5 * np.abs(p_parsed - p_gold).sum())
    return PositionBias(
        labels=list(labels),
        gold=list(hist.gold),
        parsed=list(hist.parsed),
        hits=list(hist.hits),
        n=int(gold.sum()),
        n_parsed=int(parsed.sum()),
        top_label=top_label,
        top_share=top_share,
        tv_distance=tv_distance,
    )


@dataclass(frozen=True)
class _MeasureResult:
    metrics: MeasureMetrics
    # None when the measure has no scored sample: it takes no part in group averages.
    score_reps: NDArray[np.float64] | None
    missed_reps: NDArray[np.float64] | None


def _measure(measure: str, group: Sequence[SampleRecord], seed: int) -> _MeasureResult:
    meta = MEASURES_BY_ID[measure]
    fmt = group[0].format
    scored = [s for s in group if s.scored]
    correct = np.fromiter((s.hit for s in scored), dtype=np.float64, count=len(scored))
    missed = np.fromiter((s.parsed_index is None for s in scored), dtype=np.float64, count=len(scored))
    score_reps = missed_reps = None
    if scored:
        score_reps = bootstrap_means(correct, rng(seed, "bootstrap", measure, "score"), N_RESAMPLES)
        missed_reps = bootstrap_means(missed, rng(seed, "bootstrap", measure, "missed"), N_RESAMPLES)
    low, high = _interval(score_reps)
    positions = _positions(group, fmt.n_options)
    labels = list(group[0].labels)
    metrics = MeasureMetrics(
        n=len(scored),
        errors=len(group) - len(scored),
        correct=int(correct.sum()),
        score=float(correct.mean()) if scored else None,
        ci_low=low,
        ci_high=high,
        missed=int(missed.sum()),
        missed_rate=float(missed.mean()) if scored else None,
        missed_ci=_interval(missed_reps),
        chance=fmt.chance,
        format=fmt.value,
        scale=meta.scale.value,
        factor=meta.factor.value,
        labels=labels,
        positions=positions,
        position_bias=_bias_summary(labels, positions),
    )
    return _MeasureResult(metrics, score_reps, missed_reps)


def _mean_reps(reps: Sequence[NDArray[np.float64] | None]) -> NDArray[np.float64] | None:
    """The element-wise mean of the measures' bootstrap replicates (None when none has any)."""
    present = [r for r in reps if r is not None]
    return np.mean(present, axis=0) if present else None


def _aggregate(
    members: Sequence[str], results: Mapping[str, _MeasureResult], scale: str | None = None
) -> GroupMetrics:
    rows = [results[m].metrics for m in members]
    scored = [results[m] for m in members if results[m].score_reps is not None]
    score_reps = _mean_reps([r.score_reps for r in scored])
    missed_reps = _mean_reps([r.missed_reps for r in scored])
    low, high = _interval(score_reps)
    return GroupMetrics(
        measures=list(members),
        n=sum(r.n for r in rows),
        errors=sum(r.errors for r in rows),
        score=float(np.mean([_present(r.metrics.score) for r in scored])) if scored else None,
        ci_low=low,
        ci_high=high,
        missed_rate=float(np.mean([_present(r.metrics.missed_rate) for r in scored])) if scored else None,
        missed_ci=_interval(missed_reps),
        chance=float(np.mean([r.chance for r in rows])),
        scale=scale,
    )


def _present(value: float | None) -> float:
    """A measure with replicates has a score; None here would be a bug, not data."""
    if value is None:
        raise AssertionError("a scored measure without a score")
    return value


def _position_by_format(groups: Mapping[str, list[SampleRecord]]) -> dict[str, PositionBias]:
    out: dict[str, PositionBias] = {}
    for fmt in QuestionFormat:
        members = [g for g in groups.values() if g[0].format is fmt]
        if not members:
            continue
        gold, parsed, hits = [0] * fmt.n_options, [0] * fmt.n_options, [0] * fmt.n_options
        for group in members:
            counts = _positions(group, fmt.n_options)
            gold = [a + b for a, b in zip(gold, counts.gold, strict=True)]
            parsed = [a + b for a, b in zip(parsed, counts.parsed, strict=True)]
            hits = [a + b for a, b in zip(hits, counts.hits, strict=True)]
        total = PositionCounts(gold=gold, parsed=parsed, hits=hits)
        out[fmt.value] = _bias_summary(members[0][0].labels, total)
    return out


def _groups_of(
    results: Mapping[str, _MeasureResult],
) -> tuple[dict[str, GroupMetrics], dict[str, GroupMetrics]]:
    factors: dict[str, list[str]] = {}
    scales: dict[str, list[str]] = {}
    for measure, result in results.items():
        factors.setdefault(result.metrics.factor, []).append(measure)
        scales.setdefault(result.metrics.scale, []).append(measure)
    factors_out = {f: _aggregate(ms, results, results[ms[0]].metrics.scale) for f, ms in factors.items()}
    return factors_out, {s: _aggregate(ms, results) for s, ms in scales.items()}


def score_samples(samples: Sequence[SampleLike], *, seed: int = 0) -> MetricsRecord:
    """Metrics of one run (``recworld.metrics/2``); see the module docstring.

    Raises :class:`DataError` naming the sample (its 1-based line) and field when
    a record is malformed, repeated, or inconsistent.
    """
    groups = _group(samples)
    results = {m: _measure(m, g, seed) for m, g in groups.items()}
    records = [s for g in groups.values() for s in g]
    scored = [s for s in records if s.scored]
    factors, scales = _groups_of(results)
    return MetricsRecord(
        status="ok" if scored or not records else "errored",
        seed=seed,
        n_resamples=N_RESAMPLES,
        confidence=CONFIDENCE,
        interval="percentile bootstrap over questions; groups stratified by measure",
        model=_only((s.model for s in records), "model"),
        mode=_only((s.mode for s in records), "mode"),
        variant=_only((s.variant for s in records), "variant"),
        dataset=_only((s.dataset for s in records), "dataset"),
        n=len(scored),
        correct=sum(s.hit for s in scored),
        missed=sum(s.parsed_index is None for s in scored),
        errors=len(records) - len(scored),
        measures={m: r.metrics for m, r in results.items()},
        factors=factors,
        scales=scales,
        overall=_aggregate(list(results), results) if results else None,
        positions=_position_by_format(groups),
        ranking=ranking_metrics(records),
    )


def compute_metrics(samples: Sequence[SampleLike], *, seed: int = 0) -> dict[str, Any]:
    """:func:`score_samples` in its JSON form: what ``metrics.json`` holds."""
    return score_samples(samples, seed=seed).to_json()


def _keyed(samples: Iterable[SampleLike]) -> dict[tuple[str, str], SampleRecord]:
    """Scored samples by (measure, question id): a failed request is compared with nothing."""
    out: dict[tuple[str, str], SampleRecord] = {}
    for where, record in enumerate(samples, start=1):
        sample = _as_record(record, where)
        if sample.scored:
            out[(sample.measure, sample.question_id)] = sample
    return out


def paired_comparison(
    samples_a: Sequence[SampleLike],
    samples_b: Sequence[SampleLike],
    *,
    seed: int = 0,
) -> PairedRecord:
    """Score difference A - B on the questions both runs answered, with paired bootstrap intervals.

    Resampling draws the same questions for both runs, so question difficulty
    cancels and the interval is much tighter than two independent ones. An
    interval that excludes 0 marks a difference at the 5% level.
    """
    a, b = _keyed(samples_a), _keyed(samples_b)
    common = sorted(set(a) & set(b), key=lambda k: (_ORDER.get(k[0], len(_ORDER)), k))
    if not common:
        raise DataError("the two runs share no question ids; they were not run on the same suite")
    by_measure: dict[str, list[tuple[str, str]]] = {}
    for key in common:
        by_measure.setdefault(key[0], []).append(key)
    measures: dict[str, PairedMeasure] = {}
    reps: list[NDArray[np.float64]] = []
    for measure, keys in by_measure.items():
        ca = np.array([a[k].hit for k in keys], dtype=np.float64)
        cb = np.array([b[k].hit for k in keys], dtype=np.float64)
        diff_reps = bootstrap_means(ca - cb, rng(seed, "paired", measure), N_RESAMPLES)
        reps.append(diff_reps)
        low, high = _interval(diff_reps)
        measures[measure] = PairedMeasure(
            n=len(keys),
            score_a=float(ca.mean()),
            score_b=float(cb.mean()),
            diff=float(ca.mean() - cb.mean()),
            ci_low=low,
            ci_high=high,
        )
    overall_low, overall_high = _interval(np.mean(reps, axis=0))
    return PairedRecord(
        n_common=len(common),
        only_a=len(set(a) - set(b)),
        only_b=len(set(b) - set(a)),
        measures=measures,
        overall=PairedDifference(
            diff=float(np.mean([m.diff for m in measures.values()])),
            ci_low=overall_low,
            ci_high=overall_high,
        ),
    )
