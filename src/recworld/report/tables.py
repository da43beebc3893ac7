"""LRWorld's tables in the report kit's :class:`~recworld.reportkit.Table`: formats, labels, measure columns.

Layout follows LRWorld's result tables (paper Tables 2, 3 and 22): one table
per dataset, models as rows, measures as columns grouped under their scale, a
RANDOM row with the chance score, and the best score of each column in bold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from recworld.lrworld.catalogue import MEASURES, Factor, Scale, get_measure
from recworld.report.runs import RunData
from recworld.reportkit import DASH, Cell, Table
from recworld.scoring.thresholds import MIN_INTERVAL_N

__all__ = [
    "fmt_interval",
    "fmt_pct",
    "fmt_score",
    "label",
    "labels",
    "measure_table",
    "ordered_measures",
    "scale_groups",
]

_MEASURE_ORDER = {m.id: i for i, m in enumerate(MEASURES)}
SCALE_ORDER = {s.value: i for i, s in enumerate(Scale)}
FACTOR_ORDER = {f.value: i for i, f in enumerate(Factor)}


def fmt_score(x: float | None) -> str:
    return DASH if x is None or math.isnan(x) else f"{x:.3f}"


def fmt_interval(score: float | None, low: float | None, high: float | None, n: int | None = None) -> str:
    """``0.553 [0.491, 0.612]``: the score and its 95% interval; ``0.400 (n=5)`` below the minimum n.

    The bounds are printed as they are: near 0 and 1 an exact interval is not
    symmetric, so a ``±`` would misstate one side.
    """
    if score is None:
        return DASH
    if n is not None and n < MIN_INTERVAL_N:
        return f"{score:.3f} (n={n})"
    if low is None or high is None:
        return fmt_score(score)
    return f"{score:.3f} [{low:.3f}, {high:.3f}]"


def fmt_pct(x: float | None, digits: int = 1) -> str:
    return DASH if x is None else f"{100 * x:.{digits}f}%"


def fmt_signed(x: float) -> str:
    return f"{x:+.3f}".replace("-", "−")


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
        groups=groups or (),
        row_css=row_css or (),
        left=len(lead) if left is None else left,
    )


def ordered_measures(runs: Sequence[RunData]) -> list[str]:
    """Measures with data in any run, grouped by scale, then in catalogue order (as the paper)."""
    scale_of: dict[str, str] = {}
    for run in runs:
        for m, entry in run.metrics.measures.items():
            scale_of.setdefault(m, entry.scale)
    return sorted(scale_of, key=lambda m: (SCALE_ORDER.get(scale_of[m], 9), _MEASURE_ORDER.get(m, 99), m))


def scale_groups(measures: Sequence[str], scale_of: Mapping[str, str]) -> list[tuple[str, int]]:
    groups: list[tuple[str, int]] = []
    for m in measures:
        scale = scale_of[m]
        if groups and groups[-1][0] == scale:
            groups[-1] = (scale, groups[-1][1] + 1)
        else:
            groups.append((scale, 1))
    return groups
