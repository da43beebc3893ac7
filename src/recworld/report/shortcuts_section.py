"""The "Shortcuts" section: how far each measure of a suite can be solved without any model.

It reads the shortcut battery the build ran on the suite's own questions
(``manifest.json`` ``shortcuts``, :mod:`recworld.lrworld.shortcuts`) and
flags every measure where a shortcut beats chance outside its 95 % Wilson
interval, naming the build option that removes it. The scores are the
build's, not the runs': a flag says what a model's score on that measure can
be bought with, whatever model is in the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from recworld.errors import RecWorldError
from recworld.lrworld.manifest import SuiteManifest, read_manifest
from recworld.report.analysis import AnalysisOptions, Section
from recworld.report.runs import RunData
from recworld.report.tables import Cell, Table, fmt_score, label

__all__ = ["shortcuts_section"]

NO_REMEDY = "no build option; read scores against it"


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
    intro = (
        "At build time each suite runs shortcut baselines on its own questions, with nothing learned: "
        "the most popular option, the attribute value most history lines mention, title and word overlap "
        "with what the question shows, and the longest or shortest option. A row is listed when the "
        "shortcut's 95% Wilson interval lies above chance: that much of a model's score on the measure "
        "needs no understanding of the user. A build option that works against it is named where one exists "
        "(it may weaken the shortcut rather than remove it: rebuild and read this table again); the paper's "
        "defaults are kept, so the warning travels with them."
    )
    if checked == 0:
        return Section(
            "shortcuts",
            "Shortcuts",
            intro,
            note="The suites were built before the shortcut "
            "battery existed; rebuild them to see which measures a shortcut solves.",
        )
    table = Table(
        "shortcuts",
        "Shortcuts that beat chance",
        "Score: mean hit of the shortcut (a tie among k options counts 1/k). Interval: 95% Wilson score "
        "interval over the measure's n questions. Every shortcut of every measure, flagged or not, is in "
        "manifest.json under 'shortcuts'.",
        ["dataset", "measure", "shortcut", "build option against it", "score", "chance", "95% interval", "n"],
        rows,
        left=4,
    )
    if not rows:
        return Section("shortcuts", "Shortcuts", intro, note="No shortcut beats chance on any measure.")
    return Section("shortcuts", "Shortcuts", intro, [table])
