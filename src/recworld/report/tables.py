"""Report tables as plain data, rendered to Markdown here and to HTML by the template.

Layout follows LRWorld's result tables (paper Tables 2, 3 and 22): one table
per dataset, models as rows, measures as columns grouped under their scale, a
RANDOM row with the chance score, and the best score of each column in bold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from recworld.lrworld.catalogue import MEASURES, Factor, Scale, get_measure
from recworld.report.runs import RunData
from recworld.scoring.records import GroupMetrics, MeasureMetrics

__all__ = [
    "Cell",
    "Table",
    "fmt_ci",
    "fmt_pct",
    "fmt_score",
    "label",
    "labels",
    "measure_table",
    "ordered_measures",
    "render_markdown",
]

_MEASURE_ORDER = {m.id: i for i, m in enumerate(MEASURES)}
_SCALE_ORDER = {s.value: i for i, s in enumerate(Scale)}
_FACTOR_ORDER = {f.value: i for i, f in enumerate(Factor)}
DASH = "–"


def fmt_score(x: float | None) -> str:
    return DASH if x is None or math.isnan(x) else f"{x:.3f}"


def fmt_ci(score: float | None, low: float | None, high: float | None) -> str:
    """``0.553 ± 0.031``: the ± is half the width of the 95% interval."""
    if score is None:
        return DASH
    if low is None or high is None:
        return fmt_score(score)
    return f"{score:.3f} ± {(high - low) / 2:.3f}"


def fmt_pct(x: float | None, digits: int = 1) -> str:
    return DASH if x is None else f"{100 * x:.{digits}f}%"


def fmt_signed(x: float) -> str:
    return f"{x:+.3f}".replace("-", "−")


@dataclass(frozen=True)
class Cell:
    text: str
    bold: bool = False
    title: str = ""  # tooltip in HTML: the exact interval
    css: str = ""


@dataclass
class Table:
    """A table with an optional row of column groups (scales) above its columns."""

    key: str
    title: str
    caption: str
    columns: list[str]
    rows: list[list[Cell]]
    groups: list[tuple[str, int]] = field(default_factory=list)  # (name, span) over columns[1:]
    row_css: list[str] = field(default_factory=list)
    left: int = 1  # how many leading columns hold text (left-aligned); the rest are numbers

    def to_records(self) -> list[dict[str, str]]:
        return [{c: cell.text for c, cell in zip(self.columns, row, strict=True)} for row in self.rows]


def label(measure: str) -> str:
    """A measure's column name, as its catalogue entry declares it (the paper's wording)."""
    return get_measure(measure).label


def labels(measures: Sequence[str]) -> list[str]:
    return [label(m) for m in measures]


def measure_table(
    key: str,
    title: str,
    caption: str,
    *,
    lead: Sequence[str],
    measures: Sequence[str],
    rows: list[list[Cell]],
    tail: Sequence[str] = (),
    groups: list[tuple[str, int]] | None = None,
    row_css: list[str] | None = None,
    left: int | None = None,
) -> Table:
    """A table with one column per measure (its label) between ``lead`` and ``tail`` text columns.

    Every model x measure table of the report (scores, misses, failures, paired
    differences, variants, sizes, tokens, time) is this shape; each row is
    ``len(lead) + len(measures) + len(tail)`` cells. The ``lead`` columns are
    text (left-aligned) unless ``left`` says fewer are.
    """
    return Table(
        key=key,
        title=title,
        caption=caption,
        columns=[*lead, *labels(measures), *tail],
        rows=rows,
        groups=groups or [],
        row_css=row_css or [],
        left=len(lead) if left is None else left,
    )


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*")


def render_markdown(table: Table, *, level: str = "###") -> str:
    """GitHub-flavoured Markdown; the scale groups become the first, italic body row.

    ``level`` "##" makes the table its own section (the "Runs" table), so its
    title is not repeated under a heading of the same name.
    """
    lines = [f"{level} {table.title}", ""]
    lines.append("| " + " | ".join(_md_escape(c) for c in table.columns) + " |")
    aligns = [" --- "] * table.left + [" ---: "] * (len(table.columns) - table.left)
    lines.append("|" + "|".join(aligns) + "|")
    if table.groups:
        cells = ["*scale*"]
        for name, span in table.groups:
            cells += [f"*{name}*"] + [""] * (span - 1)
        lines.append("| " + " | ".join(cells) + " |")
    for row in table.rows:
        texts = [
            f"**{_md_escape(c.text)}**" if c.bold and c.text != DASH else _md_escape(c.text) for c in row
        ]
        lines.append("| " + " | ".join(texts) + " |")
    lines += ["", f"*{table.caption}*", ""]
    return "\n".join(lines)


def ordered_measures(runs: Sequence[RunData]) -> list[str]:
    """Measures with data in any run, grouped by scale, then in catalogue order (as the paper)."""
    scale_of: dict[str, str] = {}
    for run in runs:
        for m, entry in run.metrics.measures.items():
            scale_of.setdefault(m, entry.scale)
    return sorted(scale_of, key=lambda m: (_SCALE_ORDER.get(scale_of[m], 9), _MEASURE_ORDER.get(m, 99), m))


def _scale_groups(measures: Sequence[str], scale_of: Mapping[str, str]) -> list[tuple[str, int]]:
    groups: list[tuple[str, int]] = []
    for m in measures:
        scale = scale_of[m]
        if groups and groups[-1][0] == scale:
            groups[-1] = (scale, groups[-1][1] + 1)
        else:
            groups.append((scale, 1))
    return groups


def _best(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present and len(values) > 1 else None


def _score_cell(entry: MeasureMetrics | GroupMetrics | None, best: float | None) -> Cell:
    if entry is None:
        return Cell(DASH)
    score, low, high = entry.score, entry.ci_low, entry.ci_high
    if score is None:
        # Every request failed: the model has no score here, and 0.000 would be a lie.
        return Cell(f"errors: {entry.errors}", title="every request failed; no score", css="errored")
    title = "" if low is None or high is None else f"95% CI [{low:.3f}, {high:.3f}], n = {entry.n}"
    return Cell(fmt_ci(score, low, high), bold=best is not None and score >= best - 1e-12, title=title)


def _score(entry: MeasureMetrics | GroupMetrics | None) -> float | None:
    return None if entry is None else entry.score


CI_NOTE = (
    "± is half the width of the 95% percentile bootstrap interval over questions (1000 resamples); "
    "hover a cell in the HTML report, or read metrics.csv, for the exact bounds."
)


def main_table(dataset: str, runs: Sequence[RunData]) -> Table:
    """Paper-style results table: models × measures, grouped by scale."""
    measures = ordered_measures(runs)
    first = {m: next(r.metrics.measures[m] for r in runs if m in r.metrics.measures) for m in measures}
    rows = [[Cell("RANDOM")] + [Cell(fmt_score(first[m].chance)) for m in measures]]
    best = {m: _best([_score(r.metrics.measures.get(m)) for r in runs]) for m in measures}
    for run in runs:
        rows.append([Cell(run.label), *[_score_cell(run.metrics.measures.get(m), best[m]) for m in measures]])
    return measure_table(
        f"main-{dataset}",
        f"Results on LRWorld ({dataset})",
        "Score per measure: accuracy for 4-option multiple-choice questions, HitRatio@1 for "
        "1-positive-in-10 questions; unparseable answers count as wrong. RANDOM is the chance score "
        f"(0.250 / 0.100). Best model per column in bold. {CI_NOTE}",
        lead=["Model"],
        measures=measures,
        rows=rows,
        groups=_scale_groups(measures, {m: first[m].scale for m in measures}),
        row_css=["chance"] + [""] * len(runs),
    )


def _group_table(
    key: str,
    title: str,
    caption: str,
    groups_of: Sequence[tuple[RunData, Mapping[str, GroupMetrics]]],
    order: Mapping[str, int],
) -> Table:
    """Models x groups (factors or scales): ``groups_of`` pairs each run with its groups' metrics."""
    names = sorted({g for _, groups in groups_of for g in groups}, key=lambda g: order.get(g, 99))
    first = {g: next(groups[g] for _, groups in groups_of if g in groups) for g in names}
    rows: list[list[Cell]] = [[Cell("RANDOM"), *[Cell(fmt_score(first[g].chance)) for g in names]]]
    best = {g: _best([_score(groups.get(g)) for _, groups in groups_of]) for g in names}
    for run, groups in groups_of:
        rows.append([Cell(run.label), *[_score_cell(groups.get(g), best[g]) for g in names]])
    scales = {g: first[g].scale for g in names}
    with_scales = all(scale is not None for scale in scales.values())
    return Table(
        key=key,
        title=title,
        caption=caption,
        columns=["Model", *names],
        rows=rows,
        groups=_scale_groups(names, {g: str(s) for g, s in scales.items()}) if with_scales and names else [],
        row_css=["chance"] + [""] * len(groups_of),
    )


def factor_table(dataset: str, runs: Sequence[RunData]) -> Table:
    return _group_table(
        f"factors-{dataset}",
        f"Factors ({dataset})",
        "Macro average over the measures of each factor (each measure weighs the same); the interval "
        "resamples questions within each measure. " + CI_NOTE,
        [(r, r.metrics.factors) for r in runs],
        _FACTOR_ORDER,
    )


def scale_table(dataset: str, runs: Sequence[RunData]) -> Table:
    table = _group_table(
        f"scales-{dataset}",
        f"Scales ({dataset})",
        "Macro average over the measures of each scale; intervals stratified by measure. " + CI_NOTE,
        [(r, r.metrics.scales) for r in runs],
        _SCALE_ORDER,
    )
    overall = [r.metrics.overall for r in runs]
    best = _best([_score(o) for o in overall])
    chance = [o.chance for o in overall if o is not None]
    table.columns.append("all measures")
    table.rows[0].append(Cell(fmt_score(chance[0] if chance else None)))
    for row, o in zip(table.rows[1:], overall, strict=True):
        row.append(_score_cell(o, best))
    return table
