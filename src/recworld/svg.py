"""The drawing conventions every report figure shares: palette, style, and SVG that can share a page.

A foundation module, so both reports draw alike: LRWorld's (:mod:`recworld.report`)
and LUNAR's (:mod:`recworld.lunar.report`), which sit in separate layers.

Figures are built with matplotlib's object API (no pyplot, no global backend
switch), text stays text (``svg.fonttype = none``) so the browser renders and
searches it, mathtext is off so a ``$`` in a model name prints as typed, and
every SVG id is prefixed with the chart's key so several charts can share one
HTML page without clashing clip paths. :mod:`recworld.reportkit.figures` (the
reports' grouped bars), :mod:`recworld.report.charts` (score charts),
:mod:`recworld.report.figures` and :mod:`recworld.lunar.report.figures` all draw
with these. matplotlib is imported
only inside the functions, so importing this module costs nothing.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

__all__ = ["DASH_STYLE", "PALETTE", "colour", "new_figure", "styled", "to_svg"]

# Colour-blind-safe qualitative palette (Okabe & Ito).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
_RC: Any = {  # matplotlib types rc keys as literals; this dict is checked at runtime
    "svg.fonttype": "none",
    "svg.hashsalt": "recworld",
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    # Model names and titles are data: "$x$" must print as typed, never as mathtext.
    "text.parse_math": False,
}
DASH_STYLE = (0, (4, 2))


def colour(i: int) -> str:
    """The ``i``-th series colour (the palette repeats)."""
    return PALETTE[i % len(PALETTE)]


def new_figure(width: float, height: float) -> Any:
    """A matplotlib ``Figure`` of that size in inches (object API, no pyplot state)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def styled(draw: Callable[[], str]) -> str:
    """Run ``draw`` under the report's matplotlib style and return what it returns (an SVG)."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        return str(draw())


def to_svg(fig: Any, key: str) -> str:
    """``fig`` as inline SVG whose ids, url() and href references are prefixed with ``key``."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    FigureCanvasSVG(fig)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    prefix = re.sub(r"[^A-Za-z0-9_-]", "-", key) + "-"
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", text)
    text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', text)
    # Natural size on wide pages, shrinks (via the viewBox) on narrow ones.
    text = text.replace("<svg ", '<svg class="chart" ', 1)
    return text
