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

from recworld.paths import slug

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
    """``fig`` as inline SVG cropped to what it draws, ids and url() and href references prefixed by ``key``.

    The crop is ``bbox_inches="tight"``'s (every artist in layout, padded by
    ``savefig.pad_inches``), but the figure is laid out and drawn once, where
    savefig's own tight crop lays it out a first time only to measure it: the
    box is measured at the end of the one draw, with its renderer, and becomes
    the SVG's viewBox, and the figure's background is one rectangle over that
    box, as the tight crop paints it.
    """
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    canvas = FigureCanvasSVG(fig)
    boxes: list[Any] = []
    watch = canvas.mpl_connect("draw_event", lambda event: boxes.append(fig.get_tightbbox(event.renderer)))
    framed = fig.patch.get_visible()
    fig.patch.set_visible(False)  # painted over the crop instead, by _cropped
    buf = io.StringIO()
    try:
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    finally:
        canvas.mpl_disconnect(watch)
        fig.patch.set_visible(framed)
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    if boxes:  # a savefig that drew (a test's stand-in may not)
        text = _cropped(text, boxes[-1], fig.get_size_inches()[1], _background(fig, framed))
    prefix = slug(key) + "-"  # the one slug (recworld.paths): keys built on unique_slugs stay unique
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", text)
    text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', text)
    # Natural size on wide pages, shrinks (via the viewBox) on narrow ones.
    text = text.replace("<svg ", '<svg class="chart" ', 1)
    return text


def _pt(inches: float) -> str:
    """A length in points as the SVG backend writes one (no trailing zeros)."""
    return f"{inches * 72:f}".rstrip("0").rstrip(".")


def _background(fig: Any, framed: bool) -> str:
    """The attributes of the background savefig would paint (``savefig.facecolor``; "": none)."""
    import matplotlib
    from matplotlib.colors import to_hex, to_rgba

    face = matplotlib.rcParams["savefig.facecolor"]
    rgba = to_rgba(fig.get_facecolor() if face == "auto" else face)
    if not framed or rgba[3] <= 0:
        return ""
    return f'fill="{to_hex(rgba)}"' + ("" if rgba[3] >= 1 else f' fill-opacity="{rgba[3]:g}"')


def _cropped(svg: str, box: Any, height: float, background: str) -> str:
    """``svg``, drawn ``height`` inches high, seen through ``box`` (inches, y up), padded as savefig pads."""
    import matplotlib

    box = box.padded(matplotlib.rcParams["savefig.pad_inches"])
    x, y, w, h = _pt(box.x0), _pt(height - box.y1), _pt(box.width), _pt(box.height)
    end = svg.index(">") + 1
    head = re.sub(r'\bwidth="[^"]*"', f'width="{w}pt"', svg[:end], count=1)
    head = re.sub(r'\bheight="[^"]*"', f'height="{h}pt"', head, count=1)
    head = re.sub(r'\bviewBox="[^"]*"', f'viewBox="{x} {y} {w} {h}"', head, count=1)
    if background:
        head += f'\n <rect x="{x}" y="{y}" width="{w}" height="{h}" {background}/>'
    return head + svg[end:]
