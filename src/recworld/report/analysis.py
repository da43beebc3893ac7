"""What an analysis computes, and the options analyses take: the types every analysis module uses.

An analysis returns a :class:`recworld.reportkit.Section` (the report kit's). These
types live apart from the registry (:mod:`recworld.report.sections`), which
imports every analysis module, so an analysis imports only what is below it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from recworld.errors import ConfigError
from recworld.report.runs import RunData
from recworld.reportkit import Section
from recworld.scoring.prices import Price

__all__ = ["TSNE_CLUSTERS", "AnalysisOptions", "SectionBuilder", "parse_pairs"]


# The paper's Fig. 8 draws the NeuMF space with 5 clusters ("to get a better visualization effect");
# the build spreads question targets over its own kmeans_clusters (10 by default).
TSNE_CLUSTERS = 5


@dataclass(frozen=True)
class AnalysisOptions:
    pairs: tuple[tuple[str, str], ...] = ()
    prices: Mapping[str, Price] = field(default_factory=dict)
    tsne_clusters: int = TSNE_CLUSTERS


# An analysis: the runs and the options in, its section out (None: no run it reads exists).
SectionBuilder = Callable[[Sequence[RunData], AnalysisOptions], Section | None]


def parse_pairs(values: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``SMALL=LARGE`` model specs, as ``recworld report --pair`` takes them."""
    out: list[tuple[str, str]] = []
    for value in values:
        small, sep, large = value.partition("=")
        if not sep or not small.strip() or not large.strip():
            raise ConfigError(f"--pair {value!r}: expected SMALL=LARGE (two model specs)")
        out.append((small.strip(), large.strip()))
    return tuple(out)
