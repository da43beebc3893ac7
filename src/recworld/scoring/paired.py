"""Two runs compared question by question: the paired test and interval of their score difference.

Only the questions both runs scored enter; per measure, the exact McNemar test
on the discordant questions and a smoothed paired bootstrap interval; over
measures (the macro difference), a stratified sign-flip test and the stratified
bootstrap. A test is read only on
:data:`~recworld.scoring.thresholds.MIN_PAIRED_N` shared questions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from recworld.errors import DataError
from recworld.lrworld.catalogue import MEASURES
from recworld.scoring.metrics import SampleLike, as_record
from recworld.scoring.records import PairedDifference, PairedMeasure, PairedRecord, SampleRecord
from recworld.seeding import rng
from recworld.stats import CONFIDENCE, N_RESAMPLES, mcnemar_exact, sign_flip_test, stratified_interval

__all__ = ["paired_comparison"]

_ORDER = {m.id: i for i, m in enumerate(MEASURES)}


def _keyed(samples: Iterable[SampleLike]) -> dict[tuple[str, str], SampleRecord]:
    """Scored samples by (measure, question id): a failed request is compared with nothing."""
    out: dict[tuple[str, str], SampleRecord] = {}
    for where, record in enumerate(samples, start=1):
        sample = as_record(record, where)
        if sample.scored:
            out[(sample.measure, sample.question_id)] = sample
    return out


def _interval(
    diffs: Sequence[NDArray[np.float64]], generator: np.random.Generator
) -> tuple[float | None, float | None]:
    interval = stratified_interval(diffs, generator, N_RESAMPLES, confidence=CONFIDENCE, bounds=(-1.0, 1.0))
    return (None, None) if interval is None else interval


def _measure(measure: str, ca: NDArray[np.float64], cb: NDArray[np.float64], seed: int) -> PairedMeasure:
    wins_a, wins_b = int(((ca == 1) & (cb == 0)).sum()), int(((ca == 0) & (cb == 1)).sum())
    low, high = _interval([ca - cb], rng(seed, "paired", measure))
    return PairedMeasure(
        n=len(ca),
        score_a=float(ca.mean()),
        score_b=float(cb.mean()),
        diff=float(ca.mean() - cb.mean()),
        ci_low=low,
        ci_high=high,
        wins_a=wins_a,
        wins_b=wins_b,
        p_value=mcnemar_exact(wins_a, wins_b),
    )


def _overall(
    measures: dict[str, PairedMeasure], diffs: list[NDArray[np.float64]], seed: int
) -> PairedDifference:
    if len(diffs) == 1:
        only = next(iter(measures.values()))
        low, high, p_value = only.ci_low, only.ci_high, only.p_value
    else:
        low, high = _interval(diffs, rng(seed, "paired", "overall"))
        discordant = [(m.wins_a, m.wins_b, m.n) for m in measures.values()]
        p_value = sign_flip_test(discordant, rng(seed, "paired", "overall", "test"))
    return PairedDifference(
        diff=float(np.mean([m.diff for m in measures.values()])),
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        n_min=min(m.n for m in measures.values()),
    )


def paired_comparison(
    samples_a: Sequence[SampleLike],
    samples_b: Sequence[SampleLike],
    *,
    seed: int = 0,
) -> PairedRecord:
    """Score difference A - B on the questions both runs answered, with paired tests and intervals.

    Per measure: the exact McNemar test on the discordant questions and a
    smoothed paired bootstrap interval of the difference. Over all measures
    (the macro difference): a stratified sign-flip test and the stratified
    smoothed bootstrap. The same questions enter both sides, so question
    difficulty cancels. A test is read only on
    :data:`~recworld.scoring.thresholds.MIN_PAIRED_N` shared questions
    (:attr:`PairedMeasure.significant`).
    """
    a, b = _keyed(samples_a), _keyed(samples_b)
    common = sorted(set(a) & set(b), key=lambda k: (_ORDER.get(k[0], len(_ORDER)), k))
    if not common:
        raise DataError("the two runs share no question ids; they were not run on the same suite")
    by_measure: dict[str, list[tuple[str, str]]] = {}
    for key in common:
        by_measure.setdefault(key[0], []).append(key)
    measures: dict[str, PairedMeasure] = {}
    diffs: list[NDArray[np.float64]] = []
    for measure, keys in by_measure.items():
        ca = np.array([a[k].hit for k in keys], dtype=np.float64)
        cb = np.array([b[k].hit for k in keys], dtype=np.float64)
        measures[measure] = _measure(measure, ca, cb, seed)
        diffs.append(ca - cb)
    return PairedRecord(
        n_common=len(common),
        only_a=len(set(a) - set(b)),
        only_b=len(set(b) - set(a)),
        measures=measures,
        overall=_overall(measures, diffs, seed),
    )
