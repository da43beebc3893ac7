"""Compare like with like: runs that answered different questions, small samples, skipped measures.

A run folder may hold a subset of a suite (``--limit``, ``--measures``). A
macro average over 2 measures beside one over 9, or a paired difference over
questions one model never saw, reads as a result and is not one. So scale,
factor and all-measure averages and paired comparisons are computed over the
questions every compared run answered, and the report names the partial runs.
The per-measure table keeps each run's own numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from recworld.errors import DataError
from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.lrworld.manifest import read_manifest
from recworld.report.runs import RunData
from recworld.scoring import score_samples

__all__ = ["SMALL_N", "comparable", "partial_runs", "skipped_measures_note", "small_sample_note"]

SMALL_N = 30  # below this many questions a 95% interval is too wide to separate most models

Key = tuple[str, str]


def _keys(run: RunData) -> set[Key]:
    return {(s.measure, s.question_id) for s in run.samples}


def partial_runs(runs: Sequence[RunData]) -> list[RunData]:
    """Runs missing a question that another run of the same list answered."""
    if len(runs) < 2:
        return []
    every = set().union(*(_keys(r) for r in runs))
    return [r for r in runs if _keys(r) != every]


def comparable(runs: Sequence[RunData]) -> tuple[list[RunData], str | None]:
    """``runs`` rescored on their shared questions when they differ, and a note saying so."""
    partial = partial_runs(runs)
    if not partial:
        return list(runs), None
    shared = set.intersection(*(_keys(r) for r in runs))
    names = "; ".join(
        f"{r.label} ({len({m for m, _ in _keys(r)})} measures, {len(r.samples)} questions)" for r in partial
    )
    if not shared:
        return list(runs), (
            f"Partial runs: {names}. No question was answered by every run, so the averages and paired "
            "differences below are NOT comparable across runs."
        )
    out = []
    for run in runs:
        samples = [s for s in run.samples if (s.measure, s.question_id) in shared]
        metrics = score_samples(samples, seed=run.metrics.seed)
        out.append(replace(run, samples=samples, metrics=metrics))
    measures = sorted({m for m, _ in shared})
    return out, (
        f"Partial runs: {names}. Scale, factor and all-measure averages and paired differences use only "
        f"the {len(measures)} measures and {len(shared)} questions every run answered "
        f"({', '.join(measures)}); the per-measure table shows each run's own questions."
    )


def small_sample_note(runs: Sequence[RunData]) -> str | None:
    """A warning when any score rests on fewer than :data:`SMALL_N` questions."""
    small = sorted(
        {
            (entry.n, measure)
            for run in runs
            for measure, entry in run.metrics.measures.items()
            if entry.n < SMALL_N
        }
    )
    if not small:
        return None
    measures = sorted({m for _, m in small})
    return (
        f"Small samples: {', '.join(measures)} rest on fewer than {SMALL_N} questions in at least one run "
        f"(smallest n = {small[0][0]}). Their intervals are wide; read differences there with care."
    )


# How to give a dataset an item field a measure requires, by field.
_HOW_TO_ADD = {
    "image_description": "run `recworld describe-images` on the dataset, then rebuild the suite",
}


def _how_to_add(measure: str, reason: str) -> str:
    """How to get a skipped measure: for the field its reason names, else for the fields it requires."""
    fix = next((how for need, how in _HOW_TO_ADD.items() if need in reason), "")
    entry = MEASURES_BY_ID.get(measure)
    if not fix and entry is not None:
        fix = next((_HOW_TO_ADD[f] for f in entry.requires if f in _HOW_TO_ADD), "")
    return fix


def skipped_measures_note(runs: Sequence[RunData]) -> str | None:
    """The measures the runs' suite skipped at build time, each with how to get it."""
    suites = {r.info.suite for r in runs if r.info is not None and r.info.suite}
    skipped: dict[str, str] = {}
    for suite in sorted(suites):
        try:
            skipped.update(read_manifest(Path(suite)).skipped)
        except DataError:  # the suite moved or is gone: the runs still report
            continue
    if not skipped:
        return None
    parts = []
    for measure, reason in sorted(skipped.items()):
        fix = _how_to_add(measure, reason)
        parts.append(f"{measure} ({reason}{'; ' + fix if fix else ''})")
    return "Measures the suite skipped: " + "; ".join(parts) + "."
