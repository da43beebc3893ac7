"""Scores, intervals, miss rates and position bias from ``samples.jsonl`` records.

A measure's score is the share of its scored questions answered correctly:
accuracy for ``mcq`` questions, HitRatio@1 for ``hit@1`` ones (one positive
among ten, so the top pick is either the positive or not). A miss (no choice
could be read) counts as wrong, as in the paper. A sample whose request failed
is an error, not a wrong answer: it is left out of scores, intervals and miss
rates, and counted in ``errors``. A measure (or a whole run) with no scored
sample has no score (null), never 0.

Intervals (docs/report.md, "Intervals", gives the reasons and references):

- a measure's score and miss rate: the exact Clopper-Pearson interval over its
  questions (0/20 gives [0, 0.168], never a zero-width [0, 0]);
- a run asked in several option orders: the same score (the mean over every
  question x order sample), but its interval treats a question as the unit: a
  smoothed Bayesian bootstrap over the questions' mean hit across orders, so
  five copies of a question do not pass for five questions;
- factor, scale and overall scores are macro averages over measures (each
  measure weighs the same, whatever its size); their interval is the
  stratified Clopper-Pearson interval of 0/1 hits (each measure's exact beta
  bounds, mixed with equal weights: ``recworld.stats.stratified_interval``),
  which cannot collapse to zero width; for a run asked in several orders (mean
  hits per question, not 0/1) a stratified smoothed Bayesian bootstrap
  (questions resampled within each measure, half a pseudo-observation at 0 and 1).
  A group of one measure has that measure's interval.

Paired comparisons (:func:`paired_comparison`) use the questions both runs
answered: the exact McNemar test per measure, a stratified sign-flip test for
the macro difference, and smoothed paired bootstrap intervals; a test is read
only on :data:`~recworld.scoring.thresholds.MIN_PAIRED_N` shared questions.
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
from recworld.scoring.ranking import ranking_metrics
from recworld.scoring.records import (
    METRICS_SCHEMA,
    PAIRED_SCHEMA,
    GroupMetrics,
    MeasureMetrics,
    MetricsRecord,
    PositionBias,
    PositionCounts,
    SampleRecord,
)
from recworld.scoring.thresholds import DEGENERATE_P, DEGENERATE_TV
from recworld.seeding import rng
from recworld.stats import (
    CONFIDENCE,
    N_RESAMPLES,
    binomial_upper_tail,
    clopper_pearson,
    stratified_interval,
)

_ORDER = {m.id: i for i, m in enumerate(MEASURES)}

SampleLike = SampleRecord | Mapping[str, Any]

INTERVAL = (
    "Clopper-Pearson per measure (over questions; a smoothed Bayesian bootstrap over questions when "
    "asked in several orders); groups: stratified Clopper-Pearson over measures (a stratified smoothed "
    "Bayesian bootstrap when asked in several orders)"
)

__all__ = [
    "INTERVAL",
    "METRICS_SCHEMA",
    "PAIRED_SCHEMA",
    "as_record",
    "compute_metrics",
    "load_samples",
    "score_samples",
]


def as_record(record: SampleLike, where: int) -> SampleRecord:
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
        sample = as_record(record, where)
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


def _exact(count: int, n: int) -> tuple[float | None, float | None]:
    return (None, None) if n == 0 else clopper_pearson(count, n, CONFIDENCE)


def _clustered(
    values: NDArray[np.float64], generator: np.random.Generator
) -> tuple[float | None, float | None]:
    interval = stratified_interval([values], generator, N_RESAMPLES, confidence=CONFIDENCE)
    return (None, None) if interval is None else interval


def _per_question(samples: Sequence[SampleRecord], value: Any) -> NDArray[np.float64]:
    """Each question's mean ``value`` over the orders it was asked in (one value per question)."""
    by: dict[str, list[float]] = {}
    for s in samples:
        by.setdefault(s.base_id, []).append(float(value(s)))
    return np.array([sum(v) / len(v) for v in by.values()], dtype=np.float64)


def _positions(group: Sequence[SampleRecord], n_options: int) -> PositionCounts:
    scored = [s for s in group if s.scored]
    gold = np.bincount([s.answer_index for s in scored], minlength=n_options)
    parsed = np.bincount([s.parsed_index for s in scored if s.parsed_index is not None], minlength=n_options)
    hits = np.bincount([s.answer_index for s in scored if s.hit], minlength=n_options)
    return PositionCounts(gold=gold.tolist(), parsed=parsed.tolist(), hits=hits.tolist())


def _bias_summary(labels: Sequence[str], hist: PositionCounts) -> PositionBias:
    gold = np.asarray(hist.gold, dtype=np.float64)
    parsed = np.asarray(hist.parsed, dtype=np.float64)
    top_label, top_share, tv_distance, degenerate = None, None, None, False
    if parsed.sum() > 0:
        p_parsed = parsed / parsed.sum()
        p_gold = gold / gold.sum()
        top = int(np.argmax(p_parsed))
        top_label, top_share = labels[top], float(p_parsed[top])
        # Total variation between where the model points and where the answers are: 0 = no bias.
        tv_distance = float(0.5 * np.abs(p_parsed - p_gold).sum())
        degenerate = _concentrated(int(parsed[top]), int(parsed.sum()), float(p_gold[top]), len(labels))
        degenerate = degenerate and tv_distance > DEGENERATE_TV
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
        degenerate=degenerate,
    )


def _concentrated(top_count: int, n_parsed: int, key_share: float, n_options: int) -> bool:
    """The top position is chosen more often than the key explains (one-sided exact binomial test).

    The expected share is the key's share of answers at that position, but at
    least 1/n_options, so that a position the key happens to leave empty in a
    small sample does not make any pick of it look significant. The top
    position is the most chosen of ``n_options``, so its p-value is multiplied
    by ``n_options`` (Bonferroni) before it is compared with ``DEGENERATE_P``.
    """
    expected = max(key_share, 1.0 / n_options)
    return n_options * binomial_upper_tail(top_count, n_parsed, expected) < DEGENERATE_P


@dataclass(frozen=True)
class _MeasureResult:
    metrics: MeasureMetrics
    # Per question (its mean over orders): hits and misses; None when the measure has no scored sample,
    # which then takes no part in group averages.
    hits: NDArray[np.float64] | None
    misses: NDArray[np.float64] | None


def _measure(measure: str, group: Sequence[SampleRecord], seed: int) -> _MeasureResult:
    meta = MEASURES_BY_ID[measure]
    fmt = group[0].format
    scored = [s for s in group if s.scored]
    correct = np.fromiter((s.hit for s in scored), dtype=np.float64, count=len(scored))
    missed = np.fromiter((s.parsed_index is None for s in scored), dtype=np.float64, count=len(scored))
    hits = _per_question(scored, lambda s: s.hit) if scored else None
    misses = _per_question(scored, lambda s: s.parsed_index is None) if scored else None
    questions = 0 if hits is None else int(hits.size)
    if hits is not None and misses is not None and questions < len(scored):
        # Several orders per question: the question is the unit of resampling.
        low, high = _clustered(hits, rng(seed, "interval", measure, "score"))
        missed_ci = _clustered(misses, rng(seed, "interval", measure, "missed"))
    else:
        low, high = _exact(int(correct.sum()), len(scored))
        missed_ci = _exact(int(missed.sum()), len(scored))
    positions = _positions(group, fmt.n_options)
    labels = list(group[0].labels)
    metrics = MeasureMetrics(
        n=len(scored),
        questions=questions,
        errors=len(group) - len(scored),
        correct=int(correct.sum()),
        score=float(correct.mean()) if scored else None,
        ci_low=low,
        ci_high=high,
        missed=int(missed.sum()),
        missed_rate=float(missed.mean()) if scored else None,
        missed_ci=missed_ci,
        ties=sum(bool(s.tie) for s in scored),
        chance=fmt.chance,
        format=fmt.value,
        scale=meta.scale.value,
        factor=meta.factor.value,
        labels=labels,
        positions=positions,
        position_bias=_bias_summary(labels, positions),
    )
    return _MeasureResult(metrics, hits, misses)


def _aggregate(
    name: str,
    members: Sequence[str],
    results: Mapping[str, _MeasureResult],
    seed: int,
    scale: str | None = None,
) -> GroupMetrics:
    rows = [results[m].metrics for m in members]
    scored = [results[m] for m in members if results[m].hits is not None]
    if len(scored) == 1:
        # A group of one measure is that measure: the same interval, not a second estimate of it.
        only = scored[0].metrics
        interval, missed_ci = (only.ci_low, only.ci_high), only.missed_ci
    else:
        interval = _strata([r.hits for r in scored], rng(seed, "interval", "group", name, "score"))
        missed_ci = _strata([r.misses for r in scored], rng(seed, "interval", "group", name, "missed"))
    return GroupMetrics(
        measures=list(members),
        n=sum(r.n for r in rows),
        errors=sum(r.errors for r in rows),
        score=float(np.mean([_present(r.metrics.score) for r in scored])) if scored else None,
        ci_low=interval[0],
        ci_high=interval[1],
        missed_rate=float(np.mean([_present(r.metrics.missed_rate) for r in scored])) if scored else None,
        missed_ci=missed_ci,
        chance=float(np.mean([r.chance for r in rows])),
        scale=scale,
    )


def _strata(
    strata: Sequence[NDArray[np.float64] | None], generator: np.random.Generator
) -> tuple[float | None, float | None]:
    present = [s for s in strata if s is not None]
    interval = (
        stratified_interval(present, generator, N_RESAMPLES, confidence=CONFIDENCE) if present else None
    )
    return (None, None) if interval is None else interval


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
    results: Mapping[str, _MeasureResult], seed: int
) -> tuple[dict[str, GroupMetrics], dict[str, GroupMetrics]]:
    factors: dict[str, list[str]] = {}
    scales: dict[str, list[str]] = {}
    for measure, result in results.items():
        factors.setdefault(result.metrics.factor, []).append(measure)
        scales.setdefault(result.metrics.scale, []).append(measure)
    factors_out = {
        f: _aggregate(f"factor:{f}", ms, results, seed, results[ms[0]].metrics.scale)
        for f, ms in factors.items()
    }
    return factors_out, {s: _aggregate(f"scale:{s}", ms, results, seed) for s, ms in scales.items()}


def score_samples(samples: Sequence[SampleLike], *, seed: int = 0) -> MetricsRecord:
    """Metrics of one run (``recworld.metrics/2``); see the module docstring.

    Raises :class:`DataError` naming the sample (its 1-based line) and field when
    a record is malformed, repeated, or inconsistent.
    """
    groups = _group(samples)
    results = {m: _measure(m, g, seed) for m, g in groups.items()}
    records = [s for g in groups.values() for s in g]
    scored = [s for s in records if s.scored]
    factors, scales = _groups_of(results, seed)
    return MetricsRecord(
        status="ok" if scored or not records else "errored",
        seed=seed,
        n_resamples=N_RESAMPLES,
        confidence=CONFIDENCE,
        interval=INTERVAL,
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
        overall=_aggregate("overall", list(results), results, seed) if results else None,
        positions=_position_by_format(groups),
        ranking=ranking_metrics(records),
    )


def compute_metrics(samples: Sequence[SampleLike], *, seed: int = 0) -> dict[str, Any]:
    """:func:`score_samples` in its JSON form: what ``metrics.json`` holds."""
    return score_samples(samples, seed=seed).to_json()
