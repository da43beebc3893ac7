"""Compare like with like: which runs are main-table rows, and which answered the same questions.

A suite's ``runs/`` folder collects every kind of run: the zero-shot runs the
paper's tables compare, prompt variants and option-order runs (their own
analyses), the oracle (a ceiling, not a competitor), and runs cut short with
``--limit`` or ``--measures``. Two rules keep one kind from distorting another:

- **Roles.** Only zero-shot runs asked in one option order are rows of the
  main tables (:data:`Role.MAIN`); the oracle is shown as a ceiling row,
  never bold and never the reference of a comparison (:data:`Role.CEILING`);
  variant and order runs get their own sections (:data:`Role.VARIANT`,
  :data:`Role.ORDERS`).
- **Coverage groups.** Runs whose samples name exactly the same questions form
  a :class:`CoverageGroup`. Scale, factor and all-measure averages and the
  radar compare the runs of one group only, each on its own questions, which
  are then the same questions. The group with the most questions is the
  *primary* one; a run outside it is *partial*, and its averages are shown in
  a table of its own group, with its n. A partial run never shrinks the
  questions of the others. Paired differences compare two runs on the
  questions they share, whatever their groups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from recworld.errors import DataError
from recworld.evaluation.records import recorded_backend
from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.lrworld.manifest import read_manifest
from recworld.report.runs import RunData
from recworld.scoring.thresholds import MIN_INTERVAL_N

__all__ = [
    "SMALL_N",
    "CoverageGroup",
    "Role",
    "coverage_groups",
    "degenerate_note",
    "is_ceiling",
    "is_partial",
    "main_runs",
    "orders_of",
    "partial_note",
    "role_of",
    "skipped_measures_note",
    "small_sample_note",
]

SMALL_N = 30  # below this many questions a 95% interval is too wide to separate most models

Key = tuple[str, str]


class Role(StrEnum):
    MAIN = "main"
    CEILING = "ceiling"
    VARIANT = "variant"
    ORDERS = "orders"


def orders_of(run: RunData) -> int:
    """How many option orders the run asked each question in."""
    return len({s.order for s in run.samples}) or 1


def role_of(run: RunData) -> Role:
    """Where a run belongs in the report (see the module docstring)."""
    if orders_of(run) > 1:
        return Role.ORDERS
    if run.variant != "zero-shot":
        return Role.VARIANT
    if is_ceiling(run.model):
        return Role.CEILING
    return Role.MAIN


def is_ceiling(model: str) -> bool:
    """Whether ``model``'s backend answers from the ground truth (its row's ``ceiling``: the oracle).

    False for a name no installed backend has (a model object's, a plugin since removed).
    """
    row = recorded_backend(model)
    return row is not None and row.ceiling


def main_runs(runs: Sequence[RunData]) -> list[RunData]:
    """The runs of the main tables: zero-shot in one order (and the oracle), not variants or orders.

    A dataset with no such run (a report of one variant run alone) shows its runs there instead.
    """
    by_dataset: dict[str, list[RunData]] = {}
    for run in runs:
        by_dataset.setdefault(run.dataset, []).append(run)
    out = []
    for dataset_runs in by_dataset.values():
        main = [r for r in dataset_runs if role_of(r) in (Role.MAIN, Role.CEILING)]
        out += main or dataset_runs
    return out


def _keys(run: RunData) -> frozenset[Key]:
    """The questions a run asked (answered or failed): what its numbers are about."""
    return frozenset((s.measure, s.question_id) for s in run.samples)


@dataclass(frozen=True)
class CoverageGroup:
    """Runs of one dataset that asked exactly the same questions."""

    runs: tuple[RunData, ...]
    per_measure: tuple[tuple[str, int], ...]  # (measure, questions), catalogue order
    primary: bool

    @property
    def questions(self) -> int:
        return sum(n for _, n in self.per_measure)

    @property
    def measures(self) -> int:
        return len(self.per_measure)

    def describe(self) -> str:
        """``6 measures × 1000 questions``, or ``2 measures, 7 questions`` when they differ."""
        sizes = {n for _, n in self.per_measure}
        s = "s" if self.measures != 1 else ""
        if len(sizes) == 1:
            (n,) = sizes
            return f"{self.measures} measure{s} × {n} question{'s' if n != 1 else ''}"
        return f"{self.measures} measure{s}, {self.questions} questions"

    def has(self, run: RunData) -> bool:
        return any(r is run for r in self.runs)


def coverage_groups(runs: Sequence[RunData]) -> list[CoverageGroup]:
    """The runs grouped by the exact questions they asked; the primary group first.

    Primary: the most questions, then the most runs that are not a ceiling; a
    group of ceiling runs alone is primary only when no other group exists.
    The rest follow by size. Runs keep their order inside a group.
    """
    by_keys: dict[frozenset[Key], list[RunData]] = {}
    for run in runs:
        by_keys.setdefault(_keys(run), []).append(run)

    def rank(item: tuple[frozenset[Key], list[RunData]]) -> tuple[int, int, int]:
        keys, members = item
        competitors = sum(role_of(r) is not Role.CEILING for r in members)
        return (1 if competitors else 0, len(keys), competitors)

    ordered = sorted(by_keys.items(), key=rank, reverse=True)
    order = {m.id: i for i, m in enumerate(MEASURES_BY_ID.values())}
    groups = []
    for i, (keys, members) in enumerate(ordered):
        counts: dict[str, int] = {}
        for measure, _ in keys:
            counts[measure] = counts.get(measure, 0) + 1
        per_measure = tuple(sorted(counts.items(), key=lambda kv: (order.get(kv[0], 99), kv[0])))
        groups.append(CoverageGroup(tuple(members), per_measure, primary=i == 0))
    return groups


def is_partial(run: RunData, groups: Sequence[CoverageGroup]) -> bool:
    """True when the run is outside the primary group of its dataset."""
    return bool(groups) and not groups[0].has(run)


def partial_note(groups: Sequence[CoverageGroup]) -> str | None:
    """What the averages cover when runs asked different questions."""
    if len(groups) < 2:
        return None
    primary = groups[0]
    others = "; ".join(f"{', '.join(r.label for r in g.runs)} ({g.describe()})" for g in groups[1:])
    return (
        f"Partial runs: {others}. The scale, factor and all-measure averages compare runs on identical "
        f"questions only: the first tables cover {primary.describe()} "
        f"({', '.join(r.label for r in primary.runs)}); each partial run's averages are in a table of its "
        "own, with its n. Paired differences use the questions both runs share, with n in every cell."
    )


def small_sample_note(runs: Sequence[RunData]) -> str | None:
    """A warning when any score rests on fewer than :data:`SMALL_N` questions."""
    small = sorted(
        {
            (entry.questions or entry.n, measure)
            for run in runs
            for measure, entry in run.metrics.measures.items()
            if 0 < (entry.questions or entry.n) < SMALL_N  # n = 0: every request failed (the errors table)
        }
    )
    if not small:
        return None
    measures = sorted({m for _, m in small})
    return (
        f"Small samples: {', '.join(measures)} rest on fewer than {SMALL_N} questions in at least one run "
        f"(smallest n = {small[0][0]}). Their intervals are wide; a cell under {MIN_INTERVAL_N} questions "
        "shows its n instead of an interval and is never bold."
    )


def degenerate_note(runs: Sequence[RunData]) -> str | None:
    """Runs whose answers concentrate on one option position, per question format (pooled)."""
    from recworld.scoring.thresholds import DEGENERATE_TV

    parts = []
    for run in runs:
        for fmt, bias in run.metrics.positions.items():
            if bias.degenerate and bias.top_label is not None and bias.top_share is not None:
                key = bias.gold[bias.labels.index(bias.top_label)] / max(sum(bias.gold), 1)
                parts.append(
                    f"{run.label} answers {bias.top_label} on {bias.top_share:.0%} of its {bias.n_parsed} "
                    f"parsed {fmt} answers (the key puts {key:.0%} there; TV {bias.tv_distance:.2f})"
                )
    if not parts:
        return None
    return (
        "Degenerate answering (†): "
        + "; ".join(parts)
        + f". Its scores reflect where the answers happen to sit, not what the model knows (flagged when the "
        f"total variation from the key's positions exceeds {DEGENERATE_TV} and the top position is chosen "
        "significantly more often than the key explains)."
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
