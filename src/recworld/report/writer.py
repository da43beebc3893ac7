"""``write_report``: gather runs, score them, and write report.md, report.html and two CSVs.

The work is one computation (:func:`recworld.report.model.build_report`) and
four renderings of it (:mod:`recworld.report.render`), each file written atomically.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from recworld.evaluation.records import RUN_KIND
from recworld.io import atomic_write_text, check_output_dir, claim_output_dir, mark_output_dir
from recworld.report.analysis import AnalysisOptions
from recworld.report.model import build_report
from recworld.report.render import LONG_COLUMNS, long_csv, to_html, to_markdown, wide_csv
from recworld.report.runs import gather_run_dirs, label_runs, load_run

__all__ = ["LONG_COLUMNS", "check_report_dir", "write_report"]

_log = logging.getLogger(__name__)

REPORT_KIND = "report"


def check_report_dir(out_dir: Path, *, force: bool = False) -> Path:
    """Whether a report may be written at ``out_dir`` (see :func:`write_report`); writes nothing."""
    return check_output_dir(out_dir, REPORT_KIND, force=force, joins=(RUN_KIND,))


def write_report(
    run_dirs: Sequence[Path],
    out_dir: Path,
    *,
    seed: int | None = None,
    options: AnalysisOptions | None = None,
    force: bool = False,
) -> dict[str, Path]:
    """Write ``report.md``, ``report.html``, ``metrics.csv`` and ``table.csv`` into ``out_dir``.

    ``run_dirs`` may name run directories or suites (a suite stands for all its
    finished runs). Each file is written atomically. Returns the written paths
    by kind: ``markdown``, ``html``, ``metrics_csv``, ``table_csv``. ``seed``
    None keeps each run's own bootstrap seed (from its ``metrics.json``).

    ``out_dir`` is new, empty, an earlier report, or a run folder (a single
    run's report lives beside it); any other folder needs ``force``, and keeps
    the files a report does not write (:func:`recworld.io.claim_output_dir`).
    The folder is marked as a report only after every file is written.
    """
    out_dir = check_report_dir(out_dir, force=force)
    paths, skipped_paths = gather_run_dirs(list(run_dirs))
    runs = [load_run(p, seed=seed) for p in paths]
    label_runs(runs)
    if skipped_paths:
        _log.warning(
            "skipped unfinished runs (no samples.jsonl): %s", ", ".join(str(p) for p in skipped_paths)
        )
    model = build_report(
        runs,
        [p.name for p in skipped_paths],
        options or AnalysisOptions(),
        paired_seed=0 if seed is None else seed,
    )
    claim_output_dir(out_dir, REPORT_KIND, force=force, joins=(RUN_KIND,))
    written = {
        "markdown": out_dir / "report.md",
        "html": out_dir / "report.html",
        "metrics_csv": out_dir / "metrics.csv",
        "table_csv": out_dir / "table.csv",
    }
    atomic_write_text(written["markdown"], to_markdown(model))
    atomic_write_text(written["html"], to_html(model))
    atomic_write_text(written["metrics_csv"], long_csv(model))
    atomic_write_text(written["table_csv"], wide_csv(model))
    mark_output_dir(out_dir, REPORT_KIND)
    return written
