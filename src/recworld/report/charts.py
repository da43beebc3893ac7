"""The score charts of each dataset section: bars per measure, the radar of factors, position bias.

Drawn with the shared conventions of :mod:`recworld.report.svg`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recworld.lrworld.catalogue import Factor
from recworld.report.runs import RunData
from recworld.report.svg import DASH_STYLE, colour, new_figure, styled, to_svg
from recworld.report.tables import labels
from recworld.scoring.records import GroupMetrics, MeasureMetrics

__all__ = ["bar_chart", "factors_with_data", "position_chart", "radar_chart"]


def bar_chart(key: str, dataset: str, runs: Sequence[RunData], measures: Sequence[str]) -> str:
    """Grouped bars per measure, 95% interval error bars, and each measure's chance level dashed."""

    # A run with no scored answer draws nothing, so it is no legend entry (the tables still show it).
    runs = [r for r in runs if r.metrics.n > 0] or list(runs)
    # Only measures some drawn run answered: a ceiling or partial run elsewhere may cover more.
    measures = [m for m in measures if any(m in r.metrics.measures for r in runs)]

    def draw() -> str:
        fig = new_figure(max(6.0, 0.75 * len(measures) * max(1, len(runs)) ** 0.5 + 2.5), 3.6)
        ax = fig.add_subplot()
        x = np.arange(len(measures))
        width = 0.8 / max(1, len(runs))
        for i, run in enumerate(runs):
            # A measure without a score (every request failed) draws no bar.
            rows = [_scored(run.metrics.measures.get(m)) for m in measures]
            scores = np.array([r[0] if r else np.nan for r in rows])
            low = np.array([r[0] - r[1] if r else 0.0 for r in rows])
            high = np.array([r[2] - r[0] if r else 0.0 for r in rows])
            offset = (i - (len(runs) - 1) / 2) * width
            ax.bar(x + offset, scores, width * 0.92, color=colour(i), label=run.label, zorder=2)
            ax.errorbar(
                x + offset,
                scores,
                yerr=[low, high],
                fmt="none",
                ecolor="#333333",
                elinewidth=0.9,
                capsize=2,
                zorder=3,
            )
        for j, m in enumerate(measures):
            chance = next(r.metrics.measures[m].chance for r in runs if m in r.metrics.measures)
            ax.hlines(
                chance, j - 0.45, j + 0.45, colors="#222222", linestyles=DASH_STYLE, linewidth=1.3, zorder=4
            )
        ax.plot([], [], color="#222222", linestyle=DASH_STYLE, linewidth=1.3, label="chance")
        ax.set_xticks(x, labels(measures), rotation=25, ha="right")
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy / HitRatio@1")
        ax.set_title(f"Score per measure ({dataset})")
        ax.grid(axis="y", color="#e5e5e5", zorder=0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return to_svg(fig, key)

    return styled(draw)


def _scored(entry: MeasureMetrics | None) -> tuple[float, float, float] | None:
    """(score, ci_low, ci_high) when ``entry`` has a score and an interval; None draws nothing."""
    if entry is None or entry.score is None or entry.ci_low is None or entry.ci_high is None:
        return None
    return entry.score, entry.ci_low, entry.ci_high


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
        ax.plot(closed, [*chance, chance[0]], color="#555555", linestyle="--", linewidth=1.0, label="chance")
        for i, run in enumerate(runs):
            values = [_score_or_nan(run.metrics.factors.get(f)) for f in factors]
            ax.plot(closed, [*values, values[0]], color=colour(i), linewidth=1.6, label=run.label)
            ax.fill(
                closed, [0 if np.isnan(v) else v for v in [*values, values[0]]], color=colour(i), alpha=0.12
            )
        ax.set_xticks(angles, factors)
        ax.set_ylim(0, 1)
        ax.set_yticks([0.25, 0.5, 0.75, 1.0], ["0.25", "0.50", "0.75", "1.00"], color="#777777", fontsize=7)
        ax.set_rlabel_position(90)
        ax.tick_params(axis="x", pad=6)
        ax.set_title(f"Mental world over factors ({dataset})", pad=18)
        ax.legend(loc="upper left", bbox_to_anchor=(1.12, 1.05), frameon=False)
        return to_svg(fig, key)

    return styled(draw)


def position_chart(key: str, fmt: str, runs: Sequence[RunData]) -> str | None:
    """Share of parsed answers per option position, with where the answers really are."""
    present = [r for r in runs if fmt in r.metrics.positions]
    if not present:
        return None

    def draw() -> str:
        options = present[0].metrics.positions[fmt].labels
        fig = new_figure(max(5.5, 0.55 * len(options) + 3.0), 3.0)
        ax = fig.add_subplot()
        x = np.arange(len(options))
        width = 0.8 / len(present)
        gold = np.zeros(len(options))
        for i, run in enumerate(present):
            pos = run.metrics.positions[fmt]
            parsed = np.asarray(pos.parsed, dtype=float)
            gold += np.asarray(pos.gold, dtype=float)
            share = parsed / parsed.sum() if parsed.sum() else parsed
            offset = (i - (len(present) - 1) / 2) * width
            ax.bar(
                x + offset,
                share,
                width * 0.92,
                color=colour(i),
                label=f"{run.label} ({run.dataset})",
                zorder=2,
            )
        ax.step(
            np.append(x - 0.5, x[-1] + 0.5),
            [*(gold / max(gold.sum(), 1)), (gold / max(gold.sum(), 1))[-1]],
            where="post",
            color="#222222",
            linewidth=1.2,
            label="answer key",
            zorder=3,
        )
        ax.set_xticks(x, options)
        ax.set_ylim(0, 1)
        ax.set_ylabel("share of parsed answers")
        kind = "MCQ (4 options)" if fmt == "mcq" else "HitRatio@1 (10 candidates)"
        ax.set_title(f"Position of chosen option: {kind}")
        ax.grid(axis="y", color="#e5e5e5", zorder=0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return to_svg(fig, key)

    return styled(draw)
