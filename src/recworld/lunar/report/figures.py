"""The LUNAR report's own figures: the privacy quadrant (Fig. 4) and the k-curve (Fig. 3).

Grouped bars are the report kit's (:func:`recworld.reportkit.figures.bars`).

Drawn with the shared conventions of :mod:`recworld.svg` (object API, text stays
text, mathtext off so ``$`` in a model name prints as typed, ids prefixed per
chart). Each takes plain numbers; the section builders decide what is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from recworld.reportkit.figures import Bar, whiskers
from recworld.svg import colour, new_figure, styled, to_svg

__all__ = ["Point", "k_curve", "quadrant"]

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


def k_curve(key: str, curves: Mapping[str, Sequence[tuple[int, Bar]]]) -> str:
    """Fig. 3: per model, mean Avg against the number of evidence records shown, with intervals."""

    def draw() -> str:
        fig = new_figure(5.8, 3.4)
        ax = fig.add_subplot()
        handles = []
        for i, points in enumerate(curves.values()):
            ks = [k for k, _ in points]
            values = [b for _, b in points]
            ys = np.array([np.nan if b.value is None else b.value for b in values])
            below, above = whiskers(values)
            handles.append(ax.errorbar(ks, ys, yerr=[below, above], marker="o", color=colour(i), capsize=2))
        ax.set_xlabel("evidence records shown (k)")
        ax.set_ylabel("mean Avg (1–5)")
        ax.set_ylim(1, 5)
        ax.set_title("Evidence scaling on multi-domain queries")
        ax.set_xticks(sorted({k for p in curves.values() for k, _ in p}))
        ax.grid(color="#eeeeee", zorder=0)
        # Handles and names given: a model named "_x" is a curve too, not an artist matplotlib hides.
        ax.legend(
            handles, list(curves), loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=7.5
        )
        return to_svg(fig, key)

    return styled(draw)
