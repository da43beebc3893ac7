"""Reports: paper-style tables, charts and CSVs from one or more scored runs.

``write_report(run_dirs, out_dir)`` is the entry point; ``recworld report`` calls it.
matplotlib and jinja2 are imported only when a report is written.

Every name here loads its module on first use (module ``__getattr__``, the lazy-attribute
pattern of Scientific Python's SPEC 1), so a command module that imports one submodule
does not pay for the rest at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recworld.lazy import attach

if TYPE_CHECKING:
    from recworld.report.writer import LONG_COLUMNS, write_report

# Public names that load their module (and its heavy imports) when first asked for.
_ON_FIRST_USE = {
    "LONG_COLUMNS": "recworld.report.writer",
    "write_report": "recworld.report.writer",
}


__getattr__, __dir__ = attach(__name__, _ON_FIRST_USE)


__all__ = [
    "LONG_COLUMNS",
    "write_report",
]
