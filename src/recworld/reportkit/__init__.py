"""The one report kit: the document types both suites' reports are made of, and their renderings.

LRWorld's report (:mod:`recworld.report`) and LUNAR's (:mod:`recworld.lunar.report`)
compute their content into these types and nothing else:

* :mod:`.parts`: :class:`Cell`, :class:`Table`, :class:`Figure` and :class:`Section`;
* :mod:`.markdown`: a table and a section as Markdown (every text from data escaped);
* :mod:`.html`: the jinja environment and the page frame (``templates/page.html.j2``:
  styles, the table / figure / section macros and the sample viewer), which each
  report's own page template extends;
* :mod:`.viewer`: the viewer's data as script-safe JSON, and long texts cut to a limit;
* :mod:`.settings`: a run's settings as one line (``max tokens 8; options k=7``) and the labels
  that tell runs apart.

The kit knows no suite: it imports neither LRWorld's nor LUNAR's modules.
"""

from __future__ import annotations

from recworld.reportkit.parts import DASH, Cell, Figure, Section, Table, cells

__all__ = ["DASH", "Cell", "Figure", "Section", "Table", "cells"]
