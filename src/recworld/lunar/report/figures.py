"""The LUNAR report's figures: the privacy quadrant (Fig. 4), the k-curve (Fig. 3), grouped bars.

Drawn with the shared conventions of :mod:`recworld.svg` (object API, text stays
text, mathtext off so ``$`` in a model name prints as typed, ids prefixed per
chart). Each takes plain numbers; the section builders decide what is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from recworld.svg import DASH_STYLE, colour, new_figure, styled, to_svg

__all__ = ["Bar", "Point", "bars", "k_curve", "quadrant"]

REGION_LABELS = {
    (4.0, 4.6): "Balanced",
    (4.0, 1.4): "Aggressive",
    (2.0, 4.6): "Conservative",
    (2.0, 1.4): "Ineffective",
}
LIMITS = (0.8, 5.2)  # the 1–5 scale with room for a point on its edge


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float


def quadrant(key: str, points: Sequence[Point], front: Sequence[Point], cut: float) -> str:
    """Fig. 4: one point per model, both axes 1–5 cut at ``cut``, the Pareto front as a line."""

    def draw() -> str:
        fig = new_figure(6.4, 5.0)
        ax = fig.add_subplot()
        ax.set_xlim(*LIMITS)
        ax.set_ylim(*LIMITS)
        ax.axvline(cut, color="#888888", lw=1, ls="--")
        ax.axhline(cut, color="#888888", lw=1, ls="--")
        for (x, y), name in REGION_LABELS.items():
            ax.text(x, y, name, ha="center", va="center", color="#999999", fontsize=10)
        for i, p in enumerate(points):
            ax.scatter([p.x], [p.y], color=colour(i), s=36, zorder=3)
            ax.annotate(p.label, (p.x, p.y), fontsize=7.5, xytext=(5, 4), textcoords="offset points")
        if front:
            ordered = sorted(front, key=lambda p: p.x)
            ax.plot([p.x for p in ordered], [p.y for p in ordered], color="#D55E00", lw=1.5, zorder=2)
            ax.plot([], [], color="#D55E00", lw=1.5, label="Pareto front (over models)")
            ax.legend(loc="lower left", frameon=False)
        ax.set_xlabel("personalisation: mean Avg of PC and PD (1–5)")
        ax.set_ylabel("privacy: mean score (1–5, 5 = no offence)")
        ax.set_title("Privacy vs personalisation, Full-context answers")
        ax.grid(color="#eeeeee", zorder=0)
        return to_svg(fig, key)

    return styled(draw)


@dataclass(frozen=True)
class Bar:
    """One bar: its height and, when there is one, its interval (None: no error bar)."""

    value: float | None
    low: float | None = None
    high: float | None = None


def _errors(series: Sequence[Bar]) -> tuple[np.ndarray, np.ndarray]:
    below = [b.value - b.low if b.value is not None and b.low is not None else 0.0 for b in series]
    above = [b.high - b.value if b.value is not None and b.high is not None else 0.0 for b in series]
    return np.array(below), np.array(above)


def bars(
    key: str,
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[Bar]],
    *,
    ylabel: str,
    ylim: tuple[float, float] | None = None,
    reference: float | None = None,
) -> str:
    """Grouped bars (one group per category, one bar per series) with interval whiskers where known."""

    def draw() -> str:
        width_in = max(5.0, 0.6 * len(categories) * max(1, len(series)) ** 0.5 + 2.8)
        fig = new_figure(width_in, 3.2)
        ax = fig.add_subplot()
        x = np.arange(len(categories))
        width = 0.8 / max(1, len(series))
        for i, (name, values) in enumerate(series.items()):
            heights = np.array([np.nan if b.value is None else b.value for b in values])
            offset = (i - (len(series) - 1) / 2) * width
            ax.bar(x + offset, heights, width * 0.92, color=colour(i), label=name, zorder=2)
            below, above = _errors(values)
            if below.any() or above.any():
                ax.errorbar(
                    x + offset,
                    heights,
                    yerr=[below, above],
                    fmt="none",
                    ecolor="#333333",
                    capsize=2,
                    zorder=3,
                )
        if reference is not None:
            ax.axhline(reference, color="#222222", linestyle=DASH_STYLE, linewidth=1.0, zorder=4)
        ax.set_xticks(x, list(categories), rotation=20 if len(categories) > 4 else 0, ha="right")
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(axis="y", color="#e5e5e5", zorder=0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return to_svg(fig, key)

    return styled(draw)


def k_curve(key: str, curves: Mapping[str, Sequence[tuple[int, Bar]]]) -> str:
    """Fig. 3: per model, mean Avg against the number of evidence records shown, with intervals."""

    def draw() -> str:
        fig = new_figure(5.8, 3.4)
        ax = fig.add_subplot()
        for i, (model, points) in enumerate(curves.items()):
            ks = [k for k, _ in points]
            values = [b for _, b in points]
            ys = np.array([np.nan if b.value is None else b.value for b in values])
            below, above = _errors(values)
            ax.errorbar(ks, ys, yerr=[below, above], marker="o", color=colour(i), capsize=2, label=model)
        ax.set_xlabel("evidence records shown (k)")
        ax.set_ylabel("mean Avg (1–5)")
        ax.set_ylim(1, 5)
        ax.set_title("Evidence scaling on multi-domain queries")
        ax.set_xticks(sorted({k for p in curves.values() for k, _ in p}))
        ax.grid(color="#eeeeee", zorder=0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=7.5)
        return to_svg(fig, key)

    return styled(draw)
