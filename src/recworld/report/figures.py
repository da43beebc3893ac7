"""Figures of LRWorld's analysis sections: heatmaps and a labelled scatter.

Grouped bars are the report kit's (:func:`recworld.reportkit.figures.bars`).

Drawn with the conventions of :mod:`recworld.report.svg` (object API, text stays
text, mathtext off, ids prefixed per chart), so any number of them share a page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from recworld.report.svg import colour, new_figure, styled, to_svg

__all__ = ["heatmaps", "scatter"]


def heatmaps(
    key: str,
    title: str,
    panels: Mapping[str, tuple[Sequence[str], Sequence[str], Sequence[Sequence[float]]]],
) -> str:
    """One heatmap per panel: (row names, column names, values in [0, 1]), shares written in cells."""

    def draw() -> str:
        names = list(panels)[:6]
        fig = new_figure(4.2 * len(names) + 0.6, 0.35 * max(len(panels[n][0]) for n in names) + 1.8)
        for i, name in enumerate(names):
            rows, cols, values = panels[name]
            ax = fig.add_subplot(1, len(names), i + 1)
            grid = np.asarray(values, dtype=float)
            ax.imshow(grid, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
            ax.set_xticks(np.arange(len(cols)), list(cols))
            ax.set_yticks(np.arange(len(rows)), list(rows) if i == 0 else [""] * len(rows))
            for (r, c), v in np.ndenumerate(grid):
                if len(cols) <= 10:
                    ax.text(
                        c,
                        r,
                        f"{v:.2f}",
                        ha="center",
                        va="center",
                        fontsize=6.5,
                        color="white" if v > 0.6 else "#222222",
                    )
            ax.set_title(name, fontsize=8.5)
        fig.suptitle(title, fontweight="bold", fontsize=10)
        return to_svg(fig, key)

    return styled(draw)


def scatter(
    key: str,
    title: str,
    groups: Sequence[tuple[str, Any, Any, str]],
    highlight: Sequence[tuple[str, Any, Any]] = (),
) -> str:
    """Points per group ``(label, xs, ys, marker)`` coloured by group; ``highlight`` drawn on top."""

    def draw() -> str:
        fig = new_figure(6.4, 5.0)
        ax = fig.add_subplot()
        for i, (label, xs, ys, marker) in enumerate(groups):
            ax.scatter(xs, ys, s=9, marker=marker, color=colour(i), alpha=0.7, label=label, linewidths=0)
        for label, xs, ys in highlight:
            # Small crosses: with hundreds of targets, big markers would hide the clusters beneath.
            ax.scatter(
                xs, ys, s=16, marker="x", color="#000000", alpha=0.8, linewidths=0.8, label=label, zorder=3
            )
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=7)
        return to_svg(fig, key)

    return styled(draw)
