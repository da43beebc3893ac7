"""The report kit's figure: grouped bars with interval whiskers, drawn once for both reports.

Drawn with the shared conventions of :mod:`recworld.svg` (object API, text stays
text, mathtext off so ``$`` in a model name prints as typed, ids prefixed per
chart); the result goes into a :class:`~recworld.reportkit.parts.Figure`. A
report's own figures (LRWorld's radar and heatmaps, LUNAR's quadrant and
k-curve) sit in its package and draw with the same conventions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from recworld.svg import DASH_STYLE, colour, new_figure, styled, to_svg

__all__ = ["Bar", "bars", "whiskers"]

_INK = "#222222"  # references (chance, no change)


@dataclass(frozen=True)
class Bar:
    """One bar: its height and, when there is one, its interval (None: no error bar)."""

    value: float | None
    low: float | None = None
    high: float | None = None

    @classmethod
    def spread(cls, value: float | None, spread: float | None) -> Bar:
        """A bar with a symmetric whisker (``value`` ± ``spread``; None: none)."""
        if value is None or spread is None:
            return cls(value)
        return cls(value, value - spread, value + spread)


def whiskers(series: Sequence[Bar]) -> tuple[np.ndarray, np.ndarray]:
    """How far each bar's interval reaches below and above it (0 where it has none)."""
    below = [b.value - b.low if b.value is not None and b.low is not None else 0.0 for b in series]
    above = [b.high - b.value if b.value is not None and b.high is not None else 0.0 for b in series]
    return np.array(below), np.array(above)


def _bar(value: Bar | float | None) -> Bar:
    return value if isinstance(value, Bar) else Bar(value)


def _draw_reference(ax: Any, reference: float | list[float | None] | None) -> Any:
    """A dashed line across at one number, or a segment over each category's group at its own value.

    Returns a line for its legend entry (None: no reference).
    """
    from matplotlib.lines import Line2D

    if isinstance(reference, list):
        for j, level in enumerate(reference):
            if level is not None:
                ax.hlines(
                    level, j - 0.45, j + 0.45, colors=_INK, linestyles=DASH_STYLE, linewidth=1.3, zorder=4
                )
    elif reference is not None:
        ax.axhline(reference, color=_INK, linestyle=DASH_STYLE, linewidth=1.0, zorder=4)
    return None if reference is None else Line2D([], [], color=_INK, linestyle=DASH_STYLE, linewidth=1.3)


def bars(
    key: str,
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[Bar | float | None]],
    *,
    ylabel: str,
    ylim: tuple[float, float] | None = None,
    reference: float | Sequence[float | None] | None = None,
    reference_label: str | None = None,
) -> str:
    """Grouped bars (one group per category, one bar per series) with interval whiskers where known.

    A plain number is a bar without an interval, None draws nothing. ``reference``
    is dashed: one number, a line across (chance, or 0 for a change); one value per
    category, a short segment over that category's group (None: none there), for
    references that differ by category (each measure's chance). ``reference_label``
    names it in the legend.
    """
    line = reference if reference is None or isinstance(reference, (int, float)) else list(reference)
    if isinstance(line, list) and len(line) != len(categories):
        raise ValueError(f"{len(line)} references for {len(categories)} categories")

    def draw() -> str:
        width_in = max(5.0, 0.6 * len(categories) * max(1, len(series)) ** 0.5 + 2.8)
        fig = new_figure(width_in, 3.2)
        ax = fig.add_subplot()
        x = np.arange(len(categories))
        width = 0.8 / max(1, len(series))
        handles: list[Any] = []
        for i, raw in enumerate(series.values()):
            values = [_bar(v) for v in raw]
            heights = np.array([np.nan if b.value is None else b.value for b in values])
            offset = (i - (len(series) - 1) / 2) * width
            handles.append(ax.bar(x + offset, heights, width * 0.92, color=colour(i), zorder=2))
            below, above = whiskers(values)
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
        names = list(series)
        if (drawn := _draw_reference(ax, line)) is not None and reference_label is not None:
            handles, names = [*handles, drawn], [*names, reference_label]
        ax.set_xticks(x, list(categories), rotation=20 if len(categories) > 4 else 0, ha="right")
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(axis="y", color="#e5e5e5", zorder=0)
        # Handles and names given: a name starting with "_" is a series too, not a hidden artist.
        ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        return to_svg(fig, key)

    return styled(draw)
