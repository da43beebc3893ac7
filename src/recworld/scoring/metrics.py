"""Scores, intervals, miss rates and position bias from ``samples.jsonl`` records.

A measure's score is the share of its questions answered correctly: accuracy
for ``mcq`` questions, HitRatio@1 for ``hit@1`` ones (one positive among ten,
so the top pick is either the positive or not). A miss (no choice could be
read, or the model failed) counts as wrong, as in the paper.

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

from recworld.errors import DataError
from recworld.lrworld.catalogue import MEASURES, MEASURES_BY_ID
from recworld.lrworld.schema import QuestionFormat
from recworld.scoring.bootstrap import CONFIDENCE, N_RESAMPLES, bootstrap_means, percentile_ci
from recworld.seeding import rng

METRICS_SCHEMA = "recworld.metrics/1"
PAIRED_SCHEMA = "recworld.paired/1"
_ORDER = {m.id: i for i, m in enumerate(MEASURES)}

__all__ = [
    "METRICS_SCHEMA",
    "PAIRED_SCHEMA",
    "compute_metrics",
    "load_samples",
    "paired_comparison",
]


@dataclass(frozen=True)
class _Sample:
    measure: str
    question_id: str
    dataset: str
    format: QuestionFormat
    labels: tuple[str, ...]
    answer_index: int
    parsed_index: int | None
    error: bool

    @property
    def correct(self) -> bool:
        return self.parsed_index is not None and self.parsed_index == self.answer_index

    @property
    def missed(self) -> bool:
        return self.parsed_index is None


def _field(record: Mapping[str, Any], name: str, where: int) -> Any:
    if name not in record:
        raise DataError(f"sample {where} has no {name!r}", field=name)
    return record[name]


def _parse(record: Mapping[str, Any], where: int) -> _Sample:
    """Validate one sample record; ``where`` is its 1-based position (its line in samples.jsonl)."""
    if not isinstance(record, Mapping):
        raise DataError(f"sample {where} is not a JSON object")
    measure = str(_field(record, "measure", where))
    if measure not in MEASURES_BY_ID:
        raise DataError(f"sample {where}: unknown measure {measure!r}", field="measure")
    try:
        fmt = QuestionFormat(_field(record, "format", where))
    except ValueError:
        raise DataError(f"sample {where}: unknown format {record['format']!r}", field="format") from None
    labels = tuple(str(x) for x in _field(record, "labels", where))
    if len(labels) != fmt.n_options:
        raise DataError(
            f"sample {where}: {fmt.value} needs {fmt.n_options} labels, got {len(labels)}", field="labels"
        )
    answer = _field(record, "answer_index", where)
    parsed = _field(record, "parsed_index", where)
    for name, value in (("answer_index", answer), ("parsed_index", parsed)):
        if value is None and name == "parsed_index":
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < len(labels):
            raise DataError(f"sample {where}: {name} {value!r} is not an option index", field=name)
    sample = _Sample(
        measure=measure,
        question_id=str(_field(record, "question_id", where)),
        dataset=str(record.get("dataset", "")),
        format=fmt,
        labels=labels,
        answer_index=answer,
        parsed_index=parsed,
        error=record.get("error") is not None,
    )
    stated = record.get("correct")
    if stated is not None and bool(stated) != sample.correct:
        raise DataError(
            f"sample {where}: 'correct' is {stated} but parsed_index {parsed} vs answer_index {answer} "
            f"says {sample.correct}",
            field="correct",
        )
    return sample


def load_samples(path: str | Path) -> list[dict[str, Any]]:
    """Read ``samples.jsonl``; a bad line raises :class:`DataError` naming file and line."""
    target = Path(path)
    if not target.is_file():
        raise DataError("samples file not found", path=target)
    rows: list[dict[str, Any]] = []
    with target.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON: {exc.msg}", path=target, line=number) from None
            if not isinstance(row, dict):
                raise DataError("a sample is a JSON object", path=target, line=number)
            rows.append(row)
    return rows


def _group(samples: Sequence[Mapping[str, Any]]) -> dict[str, list[_Sample]]:
    by_measure: dict[str, list[_Sample]] = {}
    seen: set[tuple[str, str]] = set()
    for where, record in enumerate(samples, start=1):
        sample = _parse(record, where)
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


def _only(samples: Sequence[Mapping[str, Any]], key: str) -> Any:
    values = {json.dumps(s.get(key), sort_keys=True) for s in samples}
    if len(values) > 1:
        raise DataError(f"samples mix several values of {key!r}: {sorted(values)}", field=key)
    return json.loads(values.pop()) if values else None


def _interval(reps: NDArray[np.float64]) -> tuple[float | None, float | None]:
    ci = percentile_ci(reps, CONFIDENCE)
    return (None, None) if ci is None else ci


def _positions(group: Sequence[_Sample], n_options: int) -> dict[str, list[int]]:
    gold = np.bincount([s.answer_index for s in group], minlength=n_options)
    parsed = np.bincount([s.parsed_index for s in group if s.parsed_index is not None], minlength=n_options)
    hits = np.bincount([s.answer_index for s in group if s.correct], minlength=n_options)
    return {"gold": gold.tolist(), "parsed": parsed.tolist(), "hits": hits.tolist()}


def _bias_summary(labels: Sequence[str], hist: Mapping[str, list[int]]) -> dict[str, Any]:
    gold = np.asarray(hist["gold"], dtype=np.float64)
    parsed = np.asarray(hist["parsed"], dtype=np.float64)
    out: dict[str, Any] = {"labels": list(labels), **{k: list(v) for k, v in hist.items()}}
    out["n"] = int(gold.sum())
    out["n_parsed"] = int(parsed.sum())
    if parsed.sum() == 0:
        out.update(top_label=None, top_share=None, tv_distance=None)
        return out
    p_parsed = parsed / parsed.sum()
    p_gold = gold / gold.sum()
    top = int(np.argmax(p_parsed))
    out["top_label"] = labels[top]
    out["top_share"] = float(p_parsed[top])
    # Total variation between where the model points and where the answers are: 0 = no bias.
    out["tv_distance"] = float(0.5 * np.abs(p_parsed - p_gold).sum())
    return out


@dataclass(frozen=True)
class _MeasureResult:
    row: dict[str, Any]
    score_reps: NDArray[np.float64]
    missed_reps: NDArray[np.float64]


def _measure(measure: str, group: Sequence[_Sample], seed: int) -> _MeasureResult:
    meta = MEASURES_BY_ID[measure]
    fmt = group[0].format
    correct = np.fromiter((s.correct for s in group), dtype=np.float64, count=len(group))
    missed = np.fromiter((s.missed for s in group), dtype=np.float64, count=len(group))
    score_reps = bootstrap_means(correct, rng(seed, "bootstrap", measure, "score"), N_RESAMPLES)
    missed_reps = bootstrap_means(missed, rng(seed, "bootstrap", measure, "missed"), N_RESAMPLES)
    low, high = _interval(score_reps)
    m_low, m_high = _interval(missed_reps)
    row: dict[str, Any] = {
        "n": len(group),
        "correct": int(correct.sum()),
        "score": float(correct.mean()),
        "ci_low": low,
        "ci_high": high,
        "missed": int(missed.sum()),
        "missed_rate": float(missed.mean()),
        "missed_ci": [m_low, m_high],
        "errors": sum(s.error for s in group),
        "chance": fmt.chance,
        "format": fmt.value,
        "scale": meta.scale.value,
        "factor": meta.factor.value,
        "labels": list(group[0].labels),
        "positions": _positions(group, fmt.n_options),
    }
    return _MeasureResult(row, score_reps, missed_reps)


def _aggregate(members: Sequence[str], results: Mapping[str, _MeasureResult]) -> dict[str, Any]:
    rows = [results[m].row for m in members]
    score_reps = np.mean([results[m].score_reps for m in members], axis=0)
    missed_reps = np.mean([results[m].missed_reps for m in members], axis=0)
    low, high = _interval(score_reps)
    m_low, m_high = _interval(missed_reps)
    return {
        "measures": list(members),
        "n": sum(r["n"] for r in rows),
        "score": float(np.mean([r["score"] for r in rows])),
        "ci_low": low,
        "ci_high": high,
        "missed_rate": float(np.mean([r["missed_rate"] for r in rows])),
        "missed_ci": [m_low, m_high],
        "chance": float(np.mean([r["chance"] for r in rows])),
    }


def _position_by_format(groups: Mapping[str, list[_Sample]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fmt in QuestionFormat:
        members = [g for g in groups.values() if g[0].format is fmt]
        if not members:
            continue
        total = {"gold": [0] * fmt.n_options, "parsed": [0] * fmt.n_options, "hits": [0] * fmt.n_options}
        for group in members:
            for key, counts in _positions(group, fmt.n_options).items():
                total[key] = [a + b for a, b in zip(total[key], counts, strict=True)]
        out[fmt.value] = _bias_summary(members[0][0].labels, total)
    return out


def compute_metrics(samples: Sequence[Mapping[str, Any]], *, seed: int = 0) -> dict[str, Any]:
    """Metrics of one run (schema ``recworld.metrics/1``); see the module docstring.

    Raises :class:`DataError` naming the sample (its 1-based line) and field when
    a record is malformed, repeated, or inconsistent.
    """
    groups = _group(samples)
    results = {m: _measure(m, g, seed) for m, g in groups.items()}
    factors: dict[str, list[str]] = {}
    scales: dict[str, list[str]] = {}
    for measure, result in results.items():
        factors.setdefault(result.row["factor"], []).append(measure)
        scales.setdefault(result.row["scale"], []).append(measure)
    measures_out: dict[str, Any] = {}
    for measure, result in results.items():
        row = dict(result.row)
        row["position_bias"] = _bias_summary(row["labels"], row["positions"])
        measures_out[measure] = row
    all_samples = [s for g in groups.values() for s in g]
    factors_out = {
        f: {"scale": results[ms[0]].row["scale"], **_aggregate(ms, results)} for f, ms in factors.items()
    }
    return {
        "schema": METRICS_SCHEMA,
        "seed": seed,
        "n_resamples": N_RESAMPLES,
        "confidence": CONFIDENCE,
        "interval": "percentile bootstrap over questions; groups stratified by measure",
        "model": _only(samples, "model"),
        "mode": _only(samples, "mode"),
        "variant": _only(samples, "variant"),
        "dataset": _only(samples, "dataset"),
        "n": len(all_samples),
        "correct": sum(s.correct for s in all_samples),
        "missed": sum(s.missed for s in all_samples),
        "errors": sum(s.error for s in all_samples),
        "measures": measures_out,
        "factors": factors_out,
        "scales": {s: _aggregate(ms, results) for s, ms in scales.items()},
        "overall": _aggregate(list(results), results) if results else None,
        "positions": _position_by_format(groups),
    }


def _keyed(samples: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], _Sample]:
    out: dict[tuple[str, str], _Sample] = {}
    for where, record in enumerate(samples, start=1):
        sample = _parse(record, where)
        out[(sample.measure, sample.question_id)] = sample
    return out


def paired_comparison(
    samples_a: Sequence[Mapping[str, Any]],
    samples_b: Sequence[Mapping[str, Any]],
    *,
    seed: int = 0,
) -> dict[str, Any]:
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
    measures: dict[str, Any] = {}
    reps: list[NDArray[np.float64]] = []
    for measure, keys in by_measure.items():
        ca = np.array([a[k].correct for k in keys], dtype=np.float64)
        cb = np.array([b[k].correct for k in keys], dtype=np.float64)
        diff_reps = bootstrap_means(ca - cb, rng(seed, "paired", measure), N_RESAMPLES)
        reps.append(diff_reps)
        low, high = _interval(diff_reps)
        measures[measure] = {
            "n": len(keys),
            "score_a": float(ca.mean()),
            "score_b": float(cb.mean()),
            "diff": float(ca.mean() - cb.mean()),
            "ci_low": low,
            "ci_high": high,
        }
    overall_low, overall_high = _interval(np.mean(reps, axis=0))
    return {
        "schema": PAIRED_SCHEMA,
        "n_common": len(common),
        "only_a": len(set(a) - set(b)),
        "only_b": len(set(b) - set(a)),
        "measures": measures,
        "overall": {
            "diff": float(np.mean([m["diff"] for m in measures.values()])),
            "ci_low": overall_low,
            "ci_high": overall_high,
        },
    }
