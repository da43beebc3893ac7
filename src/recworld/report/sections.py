"""The analysis sections of the report (paper §5 and Appendix): each a table, a figure, or a note why not.

Builders live in :mod:`recworld.report.analyses_runs` (from the runs' samples)
and :mod:`recworld.report.analyses_suite` (joining samples with the suite's
data). A builder returns None when no run it reads exists (the section is
left out), or a :class:`Section` with only a ``note`` when its input is
missing for a reason the reader should know.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from recworld.errors import ConfigError
from recworld.scoring.prices import Price, read_prices

if TYPE_CHECKING:
    from recworld.report.runs import RunData
    from recworld.report.tables import Table

__all__ = ["AnalysisOptions", "Price", "Section", "build_sections", "parse_pairs", "read_prices"]


@dataclass
class Section:
    key: str
    title: str
    intro: str
    tables: list[Table] = field(default_factory=list)
    svgs: list[str] = field(default_factory=list)
    note: str | None = None


@dataclass(frozen=True)
class AnalysisOptions:
    pairs: tuple[tuple[str, str], ...] = ()
    prices: Mapping[str, Price] = field(default_factory=dict)


def parse_pairs(values: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``SMALL=LARGE`` model specs, as ``recworld report --pair`` takes them."""
    out: list[tuple[str, str]] = []
    for value in values:
        small, sep, large = value.partition("=")
        if not sep or not small.strip() or not large.strip():
            raise ConfigError(f"--pair {value!r}: expected SMALL=LARGE (two model specs)")
        out.append((small.strip(), large.strip()))
    return tuple(out)


def build_sections(runs: Sequence[RunData], options: AnalysisOptions) -> list[Section]:
    """Every analysis with data, in the paper's order."""
    from recworld.report import analyses_runs as ar
    from recworld.report import analyses_suite as asu
    from recworld.report import analyses_usage as au
    from recworld.report.shortcuts_section import shortcuts_section

    builders: list[Callable[[], Section | None]] = [
        lambda: asu.dataset_section(runs),
        lambda: shortcuts_section(runs),
        lambda: ar.ranking_section(runs),
        lambda: ar.variants_section(runs),
        lambda: ar.orders_section(runs),
        lambda: ar.answer_distribution_section(runs),
        lambda: asu.popularity_section(runs),
        lambda: ar.size_section(runs, options.pairs),
        lambda: au.cost_section(runs, options.prices),
        lambda: au.time_section(runs),
        lambda: asu.tsne_section(runs),
        lambda: asu.case_section(runs),
    ]
    return [s for s in (build() for build in builders) if s is not None]
