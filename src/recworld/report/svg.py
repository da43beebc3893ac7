"""The report's drawing conventions, defined once in :mod:`recworld.svg` (LUNAR's report shares them)."""

from __future__ import annotations

from recworld.svg import DASH_STYLE, PALETTE, colour, new_figure, styled, to_svg

__all__ = ["DASH_STYLE", "PALETTE", "colour", "new_figure", "styled", "to_svg"]
