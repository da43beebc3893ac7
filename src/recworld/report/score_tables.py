"""The score tables of each dataset: the main table, and the scale and factor averages.

Layout follows LRWorld's result tables (paper Tables 2, 3 and 22): one table
per dataset, models as rows, measures as columns grouped under their scale, a
RANDOM row with the chance score, and the best score of each column in bold.
Rows are :class:`ScoreRow`: a run with the label to show and whether it is a
ceiling (the oracle: shown, never bold). The averages compare the runs of one
coverage group (:mod:`recworld.report.coverage`), which asked the same questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from recworld.report.runs import RunData
from recworld.report.tables import (
    FACTOR_ORDER,
    SCALE_ORDER,
    fmt_interval,
    fmt_score,
    measure_table,
    ordered_measures,
    scale_groups,
)
from recworld.reportkit import DASH, Cell, Table
from recworld.scoring.records import GroupMetrics, MeasureMetrics
from recworld.scoring.thresholds import MIN_INTERVAL_N

__all__ = ["CI_NOTE", "DEGENERATE_MARK", "ScoreRow", "factor_table", "main_table", "scale_table"]

DEGENERATE_MARK = "†"

CI_NOTE = (
    "[a, b] is the 95% interval: exact (Clopper-Pearson) for a measure, stratified Clopper-Pearson for a "
    "macro average (a smoothed bootstrap when a run asked several option orders; docs/report.md, "
    f"Intervals); under {MIN_INTERVAL_N} questions a cell shows its n "
    "instead, and is never bold."
)


@dataclass(frozen=True)
class ScoreRow:
    """A row of a score table: the run, the label to show, and whether it is a ceiling (never bold)."""

    run: RunData
    text: str
    ceiling: bool = False


def _questions(entry: MeasureMetrics) -> int:
    return entry.questions or entry.n


def _eligible(row: ScoreRow, entry: MeasureMetrics | GroupMetrics | None, questions: int) -> bool:
    """May this cell be the bold best of its column? Not a ceiling, not small, not degenerate."""
    if row.ceiling or entry is None or entry.score is None or questions < MIN_INTERVAL_N:
        return False
    return not (isinstance(entry, MeasureMetrics) and entry.position_bias.degenerate)


def _best(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if len(present) > 1 else None


def _score_cell(
    entry: MeasureMetrics | GroupMetrics | None, questions: int, best: float | None, eligible: bool
) -> Cell:
    if entry is None:
        return Cell(DASH)
    score, low, high = entry.score, entry.ci_low, entry.ci_high
    if score is None:
        # Every request failed: the model has no score here, and 0.000 would be a lie.
        return Cell(f"errors: {entry.errors}", title="every request failed; no score", css="warn")
    bounds = "" if low is None or high is None else f"95% CI [{low:.3f}, {high:.3f}], "
    title = f"{bounds}n = {questions} questions"
    text = fmt_interval(score, low, high, questions)
    css = ""
    if isinstance(entry, MeasureMetrics) and entry.position_bias.degenerate:
        bias = entry.position_bias
        text += f" {DEGENERATE_MARK}"
        css = "warn"
        title += (
            f"; degenerate answering: {bias.top_share or 0:.0%} of the parsed answers are {bias.top_label} "
            f"(TV {bias.tv_distance or 0:.2f} from the answer key)"
        )
    bold = eligible and best is not None and score >= best - 1e-12
    return Cell(text, bold=bold, title=title, css=css)


def main_table(dataset: str, key: str, rows: Sequence[ScoreRow]) -> Table:
    """Paper-style results table: models × measures, grouped by scale, each run on its own questions.

    ``key`` is the dataset's unique slug (:func:`recworld.paths.unique_slugs`), for the table's id.
    """
    runs = [r.run for r in rows]
    measures = ordered_measures(runs)
    first = {m: next(r.metrics.measures[m] for r in runs if m in r.metrics.measures) for m in measures}
    cells = [[Cell("RANDOM")] + [Cell(fmt_score(first[m].chance)) for m in measures]]
    best = {}
    for m in measures:
        entries = [(row, row.run.metrics.measures.get(m)) for row in rows]
        best[m] = _best([e.score for row, e in entries if e is not None and _eligible(row, e, _questions(e))])
    for row in rows:
        line = [Cell(row.text)]
        for m in measures:
            entry = row.run.metrics.measures.get(m)
            q = 0 if entry is None else _questions(entry)
            line.append(_score_cell(entry, q, best[m], _eligible(row, entry, q)))
        cells.append(line)
    return measure_table(
        f"main-{key}",
        f"Results on LRWorld ({dataset})",
        "Score per measure: accuracy for 4-option multiple-choice questions, HitRatio@1 for "
        "1-positive-in-10 questions; unparseable answers count as wrong. RANDOM is the chance score "
        "(0.250 / 0.100); the oracle, when present, is a ceiling row (it answers from the ground truth), "
        f"never bold. Best model per column in bold. {DEGENERATE_MARK}: degenerate answering (see the note). "
        f"{CI_NOTE}",
        lead=["Model"],
        measures=measures,
        rows=cells,
        groups=scale_groups(measures, {m: first[m].scale for m in measures}),
        row_css=["chance"] + ["ceiling" if row.ceiling else "" for row in rows],
    )


def _group_questions(run: RunData, group: GroupMetrics) -> int:
    """The fewest questions of any measure in a macro average: what its interval rests on."""
    sizes = [_questions(run.metrics.measures[m]) for m in group.measures if m in run.metrics.measures]
    return min(sizes) if sizes else 0


def _group_table(
    key: str,
    title: str,
    caption: str,
    groups_of: Sequence[tuple[ScoreRow, Mapping[str, GroupMetrics]]],
    order: Mapping[str, int],
) -> Table:
    """Models x groups (factors or scales): ``groups_of`` pairs each row with its groups' metrics."""
    names = sorted({g for _, groups in groups_of for g in groups}, key=lambda g: order.get(g, 99))
    first = {g: next(groups[g] for _, groups in groups_of if g in groups) for g in names}
    rows: list[list[Cell]] = [[Cell("RANDOM"), *[Cell(fmt_score(first[g].chance)) for g in names]]]
    best = {}
    for g in names:
        present = [(row, gs[g]) for row, gs in groups_of if g in gs]
        best[g] = _best([e.score for row, e in present if _eligible(row, e, _group_questions(row.run, e))])
    for row, groups in groups_of:
        line = [Cell(row.text)]
        for g in names:
            entry = groups.get(g)
            q = 0 if entry is None else _group_questions(row.run, entry)
            line.append(_score_cell(entry, q, best[g], _eligible(row, entry, q)))
        rows.append(line)
    scales = {g: first[g].scale for g in names}
    with_scales = all(scale is not None for scale in scales.values())
    return Table(
        key=key,
        title=title,
        caption=caption,
        columns=["Model", *names],
        rows=rows,
        groups=scale_groups(names, {g: str(s) for g, s in scales.items()}) if with_scales and names else [],
        row_css=["chance"] + ["ceiling" if row.ceiling else "" for row, _ in groups_of],
    )


def factor_table(key: str, title: str, coverage: str, rows: Sequence[ScoreRow]) -> Table:
    return _group_table(
        f"factors-{key}",
        f"Factors ({title})",
        f"Macro average over the measures of each factor (each measure weighs the same), over {coverage}: "
        f"every row answered the same questions. {CI_NOTE}",
        [(r, r.run.metrics.factors) for r in rows],
        FACTOR_ORDER,
    )


def scale_table(key: str, title: str, coverage: str, rows: Sequence[ScoreRow]) -> Table:
    table = _group_table(
        f"scales-{key}",
        f"Scales ({title})",
        f"Macro average over the measures of each scale, and over all measures, over {coverage}: every row "
        f"answered the same questions. {CI_NOTE}",
        [(r, r.run.metrics.scales) for r in rows],
        SCALE_ORDER,
    )
    overall = [(row, row.run.metrics.overall) for row in rows]
    eligible = [
        (row, o) for row, o in overall if o is not None and _eligible(row, o, _group_questions(row.run, o))
    ]
    best = _best([o.score for _, o in eligible])
    chance = [o.chance for _, o in overall if o is not None]
    lines = [[*table.rows[0], Cell(fmt_score(chance[0] if chance else None))]]
    for line, (row, o) in zip(table.rows[1:], overall, strict=True):
        q = 0 if o is None else _group_questions(row.run, o)
        lines.append([*line, _score_cell(o, q, best, any(r is row for r, _ in eligible))])
    return replace(table, columns=[*table.columns, "all measures"], rows=lines)
