"""``recworld report``'s settings, declared once: the command's flags and help are generated from them.

See :mod:`recworld.console.options`. The analyses' own knobs (pairs, prices,
t-SNE clusters) become :class:`~recworld.report.sections.AnalysisOptions` in the command.
"""

from __future__ import annotations

import dataclasses
from enum import StrEnum
from pathlib import Path
from typing import Annotated

from pydantic import Field

from recworld.console.options import OUT, Flag, Force, Progress, comma_list
from recworld.records import MAX_INT, Settings

__all__ = ["AnalyzeOptions", "ReportFormat", "ReportOptions"]


class ReportFormat(StrEnum):
    latex = "latex"


class ReportOptions(Settings):
    """Everything ``recworld report RUN...`` takes besides the runs."""

    out: Annotated[
        Path | None,
        Field(description="Output directory (default: SUITE/report, or the runs' common parent)."),
        dataclasses.replace(OUT, aliases=("-o",)),
    ] = None
    seed: Annotated[
        int | None,
        Field(
            ge=0, le=MAX_INT, description="Bootstrap seed (default: the one each run's metrics.json used)."
        ),
    ] = None
    pairs: Annotated[
        tuple[str, ...],
        Field(description="SMALL=LARGE model specs: a relative-improvement table (repeatable)."),
        Flag("--pair", metavar="SMALL=LARGE"),
    ] = ()
    prices: Annotated[
        Path | None,
        Field(description="JSON lines or CSV of model, input and output USD per 1M tokens."),
        Flag(metavar="FILE"),
    ] = None
    tsne_clusters: Annotated[
        int, Field(ge=1, le=1000, description="k-means clusters in the NeuMF t-SNE (paper Fig. 8: 5).")
    ] = 5
    formats: Annotated[
        tuple[ReportFormat, ...],
        Field(
            description="Also write this format: latex (report.tex, booktabs score tables with intervals). "
            "Repeatable; report.md, report.html and the CSVs are always written."
        ),
        Flag("--format"),
    ] = ()
    force: Force = False
    progress: Progress = True


class AnalyzeOptions(Settings):
    """What ``recworld analyze`` takes besides ``recworld eval``'s run settings (from ``EvalConfig``)."""

    model: Annotated[str, Field(description="Model spec, e.g. llamacpp:smollm2-135m."), Flag(metavar="SPEC")]
    all_variants: Annotated[
        bool, Field(description="Every variant that applies, and 5 option orders."), Flag("--all")
    ] = False
    variants: Annotated[
        tuple[str, ...] | None,
        Field(description="Comma-separated variants (besides zero-shot)."),
        Flag(parse=comma_list, cli_type=str, metavar="NAMES"),
    ] = None
    out: Annotated[Path | None, Field(description="Report directory (default SUITE/report)."), OUT] = None
