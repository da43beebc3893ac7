"""Reports: paper-style tables, charts and CSVs from one or more scored runs.

``write_report(run_dirs, out_dir)`` is the entry point; ``recworld report`` calls it.
matplotlib and jinja2 are imported only when a report is written.
"""

from recworld.report.writer import LONG_COLUMNS, write_report

__all__ = ["LONG_COLUMNS", "write_report"]
