"""The kit's bar chart saved as SVG in one draw: cropped as ``bbox_inches="tight"`` crops it, never clipped.

:func:`recworld.svg.to_svg` measures the crop at the end of its one draw instead
of letting savefig lay the figure out twice. The checks here share nothing with
that: every text matplotlib draws is recorded as it is drawn (its window extent,
from the renderer drawing it) and must lie inside the saved viewBox; the saved
size must be what matplotlib's own ``bbox_inches="tight"`` gives for the same
figure; the same chart saves to the same bytes; and a per-category reference is
a segment over each category's group at its own height.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.collections import LineCollection
from matplotlib.text import Text

import recworld.reportkit.figures as kit
from recworld.reportkit.figures import Bar, bars

# Latin, Greek and Cyrillic letters (the bundled DejaVu Sans has their glyphs), digits, spaces, signs, markup.
_CHARS = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x17F, categories=("L", "N", "P", "S", "Zs")),
    st.characters(min_codepoint=0x391, max_codepoint=0x3C9, categories=("L",)),
    st.characters(min_codepoint=0x410, max_codepoint=0x44F, categories=("L",)),
)
LABELS = st.one_of(
    st.text(_CHARS, min_size=1, max_size=3),  # short
    st.text(_CHARS, min_size=30, max_size=70),  # long: a legend or tick label past the figure's edge
    st.text(_CHARS, min_size=1, max_size=20),
).filter(lambda s: s.strip())


@dataclass
class Saved:
    """What one ``to_svg`` call drew and wrote."""

    svg: str
    height_pt: float  # the figure's own height, in which the drawn extents are measured
    texts: list[tuple[str, tuple[float, float, float, float]]] = field(default_factory=list)
    tight: str = ""  # matplotlib's own tight save of the same figure
    figure: Any = None


@contextmanager
def saving() -> Iterator[list[Saved]]:
    """Record each chart the kit saves: its drawn texts, its SVG and the size of a tight save of it."""
    saved: list[Saved] = []
    real_to_svg, real_draw = kit.to_svg, Text.draw
    drawn: list[tuple[str, tuple[float, float, float, float]]] = []

    def draw(self: Text, renderer: Any) -> None:
        real_draw(self, renderer)
        if self.get_visible() and self.get_text():
            drawn.append((self.get_text(), tuple(self.get_window_extent(renderer).extents)))  # type: ignore[arg-type]

    def to_svg(fig: Any, key: str) -> str:
        drawn.clear()
        svg = real_to_svg(fig, key)
        record = Saved(svg, fig.get_size_inches()[1] * 72, list(drawn), figure=fig)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
        record.tight = buf.getvalue()
        saved.append(record)
        return svg

    with mock.patch.object(Text, "draw", draw), mock.patch.object(kit, "to_svg", to_svg):
        yield saved


def _root(svg: str) -> str:
    start = svg.index("<svg")
    return svg[start : svg.index(">", start)]


def _length(svg: str, name: str) -> float:
    found = re.search(rf'\b{name}="([0-9.]+)pt"', _root(svg))
    assert found, _root(svg)
    return float(found.group(1))


def _view_box(svg: str) -> tuple[float, float, float, float]:
    found = re.search(r'\bviewBox="([^"]+)"', _root(svg))
    assert found, _root(svg)
    x, y, w, h = (float(v) for v in found.group(1).split())
    return x, y, w, h


def _placed(svg: str, dx: float = 0.0, dy: float = 0.0) -> list[tuple[str, float, float]]:
    """Each ``<text>``: its string and where it stands, moved by (dx, dy)."""
    found = re.findall(r'<text [^>]*?x="([-0-9.]+)" y="([-0-9.]+)"[^>]*>([^<]*)</text>', svg)
    return [(text, round(float(x) + dx, 2), round(float(y) + dy, 2)) for x, y, text in found]


def _chart(title: str, categories: Sequence[str], names: Sequence[str], reference: Any = None) -> str:
    heights = [0.2 + 0.1 * (i % 6) for i in range(len(categories))]
    series = {name: [Bar(v, 0.1, v + 0.05 * (j + 1)) for v in heights] for j, name in enumerate(names)}
    return bars(
        "key",
        title,
        categories,
        series,
        ylabel="score",
        ylim=(0, 1),
        reference=reference,
        reference_label="chance",
    )


@settings(max_examples=12, deadline=None)
@given(
    title=LABELS,
    categories=st.lists(LABELS, min_size=1, max_size=7),
    names=st.lists(LABELS, min_size=1, max_size=4, unique=True),
)
def test_every_drawn_text_lies_inside_the_saved_canvas(
    title: str, categories: list[str], names: list[str]
) -> None:
    with saving() as saved:
        svg = _chart(title, categories, names, reference=[0.25] * len(categories))
    (record,) = saved
    assert record.svg == svg
    x, y, w, h = _view_box(svg)
    assert (_length(svg, "width"), _length(svg, "height")) == (pytest.approx(w), pytest.approx(h))
    texts = {text for text, _ in record.texts}
    assert {title, *names, "chance"} <= texts  # the recorder saw the labels that stick out
    for text, (x0, y0, x1, y1) in record.texts:
        top, bottom = record.height_pt - y1, record.height_pt - y0  # SVG's y grows downwards
        assert x - 1e-6 <= x0 <= x1 <= x + w + 1e-6, (text, (x0, x1), (x, w))
        assert y - 1e-6 <= top <= bottom <= y + h + 1e-6, (text, (top, bottom), (y, h))
    # The same picture as matplotlib's own tight save of the same figure: its size, every text where it was.
    tight = record.tight
    assert (w, h) == (
        pytest.approx(_length(tight, "width"), abs=0.01),
        pytest.approx(_length(tight, "height"), abs=0.01),
    )
    assert _placed(svg, -x, -y) == _placed(tight) and len(_placed(tight)) >= len(categories) + len(names) + 2


def test_the_same_chart_saves_to_the_same_bytes() -> None:
    args = ("Score (ml-100k) «$x$» <b>", ["Assoc rule", "KG (movie, cast)", "Ωμέγα"], ["openai:gpt-4o", "_Ж"])
    first = _chart(*args, reference=0.5)
    assert _chart(*args, reference=0.5) == first
    assert 'fill="#ffffff"' in first  # the background is painted over the whole crop
    assert "<dc:date>" not in first and "Matplotlib v" not in first and "&lt;b&gt;" in first


def test_a_reference_per_category_is_a_segment_over_its_group() -> None:
    levels = [0.25, None, 0.1, 0.5]
    with saving() as saved:
        _chart("t", ["a", "b", "c", "d"], ["m1", "m2"], reference=levels)
    (ax,) = saved[0].figure.axes
    segments = sorted(  # horizontal ones: the references (whiskers are vertical, their caps markers)
        tuple(round(float(v), 6) for v in (seg[0][0], seg[1][0], seg[0][1]))
        for collection in ax.collections
        if isinstance(collection, LineCollection)
        for seg in collection.get_segments()
        if seg[0][1] == seg[1][1]
    )
    expected = sorted((j - 0.45, j + 0.45, v) for j, v in enumerate(levels) if v is not None)
    assert segments == [(round(a, 6), round(b, 6), v) for a, b, v in expected]
    assert "chance" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_a_single_reference_is_still_one_line_across() -> None:
    with saving() as saved:
        _chart("t", ["a", "b"], ["m"], reference=0.3)
    (ax,) = saved[0].figure.axes
    across = [line for line in ax.get_lines() if list(line.get_ydata()) == [0.3, 0.3]]
    assert len(across) == 1 and list(across[0].get_xdata()) == [
        0,
        1,
    ]  # axhline: axes coordinates, edge to edge


def test_references_must_match_the_categories() -> None:
    with pytest.raises(ValueError, match="3 references for 2 categories"):
        _chart("t", ["a", "b"], ["m"], reference=[0.1, 0.2, 0.3])
