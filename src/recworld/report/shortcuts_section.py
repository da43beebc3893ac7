"""The "Shortcuts" section: how far each measure of a suite can be solved without any model.

It reads the shortcut battery the build ran on the suite's own questions
(``manifest.json`` ``shortcuts``, :mod:`recworld.lrworld.shortcuts`) and
flags every measure where a shortcut beats chance by more than 2 standard
errors, naming the build option that works against it. A second table sets
each run's faithful score beside its debiased score: on the questions no
flagged option-only shortcut answers (``MeasureShortcuts.solved``). The scores are the
build's, not the runs': a flag says what a model's score on that measure can
be bought with, whatever model is in the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from recworld.errors import RecWorldError
from recworld.lrworld.manifest import SuiteManifest, read_manifest
from recworld.report.analysis import AnalysisOptions
from recworld.report.runs import RunData
from recworld.report.tables import fmt_score, label
from recworld.reportkit import Cell, Section, Table

__all__ = ["shortcuts_section"]

NO_REMEDY = "no build option; read scores against it"
INTRO = (
    "At build time each suite runs shortcut baselines on its own questions, with no model: "
    "the most popular option, the attribute value most history lines mention, title and word overlap "
    "with what the question shows, the longest or shortest option, and three that learn from the "
    "measure's other questions only: the option most often the answer elsewhere (leave one out), the "
    "option most often right where shown, and a logistic regression over option-only features "
    "trained on half the questions and scored on the other half. A row is listed when the shortcut "
    "beats chance by more than 2 standard errors of a chance guesser: that much of a model's score on "
    "the measure needs no understanding of the user. A build option that works against it is named "
    "where one exists (it may weaken the shortcut rather than remove it: rebuild and read this table "
    "again); the paper's "
    "defaults are kept, so the warning travels with them."
)


def _manifests(runs: Sequence[RunData]) -> list[tuple[Path, SuiteManifest]]:
    seen: dict[Path, SuiteManifest] = {}
    for run in runs:
        if run.info is None or not run.info.suite:
            continue
        path = Path(run.info.suite).resolve()
        if path in seen:
            continue
        try:
            seen[path] = read_manifest(path)
        except RecWorldError:
            continue  # a suite that moved: the other sections say so
    return list(seen.items())


def question_number(question_id: str) -> int | None:
    """The line of a question in its measure's file: the number its id ends with (``.../00042``)."""
    tail = question_id.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _score(samples: Sequence[tuple[int | None, bool]], solved: set[int] | None) -> tuple[float, int] | None:
    kept = [ok for i, ok in samples if solved is None or (i is not None and i not in solved)]
    return (sum(kept) / len(kept), len(kept)) if kept else None


def debiased_table(runs: Sequence[RunData], manifests: dict[Path, SuiteManifest]) -> Table | None:
    """Per run and measure: faithful score and score on questions no flagged option-only shortcut answers."""
    rows: list[list[Cell]] = []
    for run in runs:
        if run.info is None or not run.info.suite:
            continue
        manifest = manifests.get(Path(run.info.suite).resolve())
        if manifest is None or manifest.shortcuts is None or not manifest.shortcuts.measures:
            continue
        by_measure: dict[str, list[tuple[int | None, bool]]] = {}
        for sample in run.samples:
            if sample.correct is not None:
                by_measure.setdefault(sample.measure, []).append(
                    (question_number(sample.question_id), bool(sample.correct))
                )
        for measure, samples in by_measure.items():
            verdict = manifest.shortcuts.measures.get(measure)
            if verdict is None:
                continue
            faithful = _score(samples, None)
            debiased = _score(samples, set(verdict.solved))
            assert faithful is not None
            rows.append(
                [
                    Cell(run.label or run.model, title=run.name),
                    Cell(label(measure), title=measure),
                    Cell(fmt_score(faithful[0])),
                    Cell("–" if debiased is None else fmt_score(debiased[0]), bold=True),
                    Cell(f"{0 if debiased is None else debiased[1]} of {faithful[1]}"),
                    Cell(f"{verdict.strongest} {fmt_score(verdict.strongest_score)}"),
                    Cell(fmt_score(verdict.chance)),
                ]
            )
    if not rows:
        return None
    return Table(
        key="debiased",
        title="Faithful and debiased scores",
        caption="Faithful: every scored question. Debiased: only the questions whose answer no flagged "
        "option-only shortcut picks (popularity, least popular, longest/shortest option, the leave-one-out "
        "answer prior and rate, the cross-fitted option model), as the build listed them (manifest.json "
        "'shortcuts.measures'). A score that holds on the debiased questions is not bought with the "
        "options alone; one that drops to chance or below was. On a measure without a flagged option-only "
        "shortcut both columns are the same.",
        columns=["model", "measure", "faithful", "debiased", "debiased n", "strongest shortcut", "chance"],
        rows=rows,
        left=2,
    )


SHORTCUT_COLUMNS = (
    "dataset",
    "measure",
    "shortcut",
    "build option against it",
    "score",
    "chance",
    "95% interval",
    "n",
)


def shortcuts_section(runs: Sequence[RunData], options: AnalysisOptions) -> Section | None:
    """The flagged shortcuts of every suite behind the runs (None when no run names a suite)."""
    manifests = _manifests(runs)
    if not manifests:
        return None
    rows: list[list[Cell]] = []
    checked = 0
    for _, manifest in manifests:
        if manifest.shortcuts is None:
            continue
        checked += 1
        for row in manifest.shortcuts.rows:
            if not row.flagged:
                continue
            interval = f"[{row.ci_low:.3f}, {row.ci_high:.3f}]"
            rows.append(
                [
                    Cell(manifest.dataset),
                    Cell(label(row.measure), title=row.measure),
                    Cell(row.shortcut),
                    Cell(row.remedy or NO_REMEDY),
                    Cell(fmt_score(row.score), bold=True),
                    Cell(fmt_score(row.chance)),
                    Cell(interval, title=f"95% Wilson interval, n = {row.n}"),
                    Cell(str(row.n)),
                ]
            )
    if checked == 0:
        return Section(
            key="shortcuts",
            title="Shortcuts",
            intro=INTRO,
            empty="The suites were built before the shortcut "
            "battery existed; rebuild them to see which measures a shortcut solves.",
        )
    tables = [t for t in (debiased_table(runs, dict(manifests)),) if t is not None]
    table = Table(
        key="shortcuts",
        title="Shortcuts that beat chance",
        caption="Score: mean hit of the shortcut (a tie among k options counts 1/k). Interval: 95% "
        "Wilson score interval over the measure's n questions. Every shortcut of every measure, flagged or "
        "not, is in manifest.json under 'shortcuts'.",
        columns=SHORTCUT_COLUMNS,
        rows=rows,
        left=4,
    )
    if not rows:
        return Section(
            key="shortcuts",
            title="Shortcuts",
            intro=INTRO,
            tables=tables,
            empty="No shortcut beats chance on any measure.",
        )
    return Section(key="shortcuts", title="Shortcuts", intro=INTRO, tables=[table, *tables])
