"""The score charts of each dataset section: bars per measure, the radar of factors, position bias.

The bars are the report kit's (:func:`recworld.reportkit.figures.bars`); the others are
drawn with the shared conventions of :mod:`recworld.report.svg`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recworld.lrworld.catalogue import Factor
from recworld.report.runs import RunData
from recworld.report.svg import colour, new_figure, styled, to_svg
from recworld.report.tables import labels
from recworld.reportkit.figures import Bar, bars
from recworld.scoring.records import GroupMetrics, MeasureMetrics

__all__ = ["bar_chart", "factors_with_data", "position_chart", "radar_chart"]


def bar_chart(key: str, dataset: str, runs: Sequence[RunData], measures: Sequence[str]) -> str:
    """Grouped bars per measure, 95% interval error bars, and each measure's chance level dashed."""

    # A run with no scored answer draws nothing, so it is no legend entry (the tables still show it).
    runs = [r for r in runs if r.metrics.n > 0] or list(runs)
    # Only measures some drawn run answered: a ceiling or partial run elsewhere may cover more.
    measures = [m for m in measures if any(m in r.metrics.measures for r in runs)]
    chance = [next(r.metrics.measures[m].chance for r in runs if m in r.metrics.measures) for m in measures]
    return bars(
        key,
        f"Score per measure ({dataset})",
        labels(measures),
        {run.label: [_scored(run.metrics.measures.get(m)) for m in measures] for run in runs},
        ylabel="accuracy / HitRatio@1",
        ylim=(0, 1),
        reference=chance,
        reference_label="chance",
    )


def _scored(entry: MeasureMetrics | None) -> Bar | None:
    """The bar when ``entry`` has a score and an interval; None (every request failed) draws none."""
    if entry is None or entry.score is None or entry.ci_low is None or entry.ci_high is None:
        return None
    return Bar(entry.score, entry.ci_low, entry.ci_high)


def _score_or_nan(entry: GroupMetrics | None) -> float:
    return np.nan if entry is None or entry.score is None else float(entry.score)


def factors_with_data(runs: Sequence[RunData]) -> list[str]:
    present = {f for r in runs for f in r.metrics.factors}
    return [f.value for f in Factor if f.value in present]


def radar_chart(key: str, dataset: str, runs: Sequence[RunData]) -> str | None:
    """Each model's "mental world": its score on every factor with data (None if fewer than 3)."""
    runs = [r for r in runs if r.metrics.n > 0]  # a run with no scored answer has no shape to draw
    factors = factors_with_data(runs)
    if len(factors) < 3:
        return None

    def draw() -> str:
        fig = new_figure(6.4, 4.6)
        ax = fig.add_subplot(projection="polar")
        angles = np.linspace(0, 2 * np.pi, len(factors), endpoint=False)
        closed = np.append(angles, angles[0])
        chance = [next(r.metrics.factors[f].chance for r in runs if f in r.metrics.factors) for f in factors]
        handles = ax.plot(closed, [*chance, chance[0]], color="#555555", linestyle="--", linewidth=1.0)
        for i, run in enumerate(runs):
            values = [_score_or_nan(run.metrics.factors.get(f)) for f in factors]
            handles += ax.plot(closed, [*values, values[0]], color=colour(i), linewidth=1.6)
            ax.fill(
                closed, [0 if np.isnan(v) else v for v in [*values, values[0]]], color=colour(i), alpha=0.12
            )
        ax.set_xticks(angles, factors)
        ax.set_ylim(0, 1)
        ax.set_yticks([0.25, 0.5, 0.75, 1.0], ["0.25", "0.50", "0.75", "1.00"], color="#777777", fontsize=7)
        ax.set_rlabel_position(90)
        ax.tick_params(axis="x", pad=6)
        ax.set_title(f"Mental world over factors ({dataset})", pad=18)
        # Handles and names given: a run labelled "_x" is a run, not a hidden artist.
        names = ["chance", *(run.label for run in runs)]
        ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.12, 1.05), frameon=False)
        return to_svg(fig, key)

    return styled(draw)


def position_chart(key: str, fmt: str, runs: Sequence[RunData]) -> str | None:
    """Share of parsed answers per option position, with where the answers really are."""
    present = [r for r in runs if fmt in r.metrics.positions]
    if not present:
        return None
    gold = np.sum([np.asarray(r.metrics.positions[fmt].gold, dtype=float) for r in present], axis=0)
    kind = "MCQ (4 options)" if fmt == "mcq" else "HitRatio@1 (10 candidates)"
    return bars(
        key,
        f"Position of chosen option: {kind}",
        present[0].metrics.positions[fmt].labels,
        {f"{run.label} ({run.dataset})": _shares(run.metrics.positions[fmt].parsed) for run in present},
        ylabel="share of parsed answers",
        ylim=(0, 1),
        reference=[float(g) for g in gold / max(gold.sum(), 1)],
        reference_label="answer key",
    )


def _shares(counts: Sequence[int]) -> list[float]:
    """Each position's share of the parsed answers (all 0 when none parsed)."""
    parsed = np.asarray(counts, dtype=float)
    return [float(v) for v in (parsed / parsed.sum() if parsed.sum() else parsed)]
