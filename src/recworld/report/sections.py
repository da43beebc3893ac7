"""The analysis sections of the report (paper §5 and Appendix), in the paper's order.

Each analysis is a :data:`~recworld.report.analysis.SectionBuilder` in its
module: :mod:`~recworld.report.analyses_runs` and
:mod:`~recworld.report.analyses_usage` read the runs' samples,
:mod:`~recworld.report.analyses_variants` sets runs against each other on shared questions,
:mod:`~recworld.report.analyses_suite` joins them with the suite's data. A
builder returns None when no run it reads exists (the section is left out),
or a :class:`~recworld.reportkit.Section` with only ``empty`` when its input is missing for a
reason the reader should know. Adding an analysis is one module (or one
function) and one entry in :data:`SECTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from recworld.report import analyses_runs as ar
from recworld.report import analyses_suite as asu
from recworld.report import analyses_usage as au
from recworld.report import analyses_variants as av
from recworld.report.analysis import AnalysisOptions, SectionBuilder, parse_pairs
from recworld.report.runs import RunData
from recworld.report.shortcuts_section import shortcuts_section
from recworld.reportkit import Section
from recworld.scoring.prices import Price, read_prices

__all__ = [
    "SECTIONS",
    "AnalysisOptions",
    "Price",
    "SectionBuilder",
    "build_sections",
    "parse_pairs",
    "read_prices",
]

SECTIONS: tuple[SectionBuilder, ...] = (
    asu.dataset_section,
    shortcuts_section,
    ar.ranking_section,
    av.variants_section,
    ar.orders_section,
    ar.answer_distribution_section,
    asu.popularity_section,
    av.size_section,
    au.cost_section,
    au.time_section,
    asu.tsne_section,
    asu.case_section,
)


def build_sections(
    runs: Sequence[RunData],
    options: AnalysisOptions,
    sections: Sequence[SectionBuilder] = SECTIONS,
    *,
    progress: Callable[[str], None] | None = None,
) -> list[Section]:
    """Every analysis with data, in the order of ``sections`` (``progress`` hears each one's name)."""
    out = []
    for build in sections:
        if progress is not None:
            progress(getattr(build, "__name__", "analysis").removesuffix("_section").replace("_", " "))
        section = build(runs, options)
        if section is not None:
            out.append(section)
    return out
