"""The k-curve's legend names every model, whatever its name (matplotlib hides ``_``-labels)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.lunar.report import figures
from recworld.reportkit.figures import Bar

NAMES = st.lists(
    st.text(st.sampled_from("_abXY019-."), min_size=1, max_size=6), min_size=1, max_size=4, unique=True
)


@settings(max_examples=5, deadline=None)
@given(names=NAMES, hidden=st.booleans())
def test_the_legend_lists_each_model_in_order(names: list[str], hidden: bool) -> None:
    if hidden:
        names = ["_" + names[0], *names[1:]]  # matplotlib would skip this one given as label=
    drawn: list[Any] = []
    real = figures.to_svg

    def capture(fig: Any, key: str) -> str:
        drawn.append(fig)
        return real(fig, key)

    curves = {name: [(1, Bar(2.0 + i / 10, 1.5, 2.5)), (3, Bar(3.0))] for i, name in enumerate(names)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(figures, "to_svg", capture)
        figures.k_curve("kc", curves)
    (ax,) = drawn[-1].axes
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == names
    assert len(legend.legend_handles) == len(names)  # one handle per curve
