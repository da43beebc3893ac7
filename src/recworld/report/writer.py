"""``write_report``: gather runs, score them, and write report.md, report.html and two CSVs.

The work is one computation (:func:`recworld.report.model.build_report`) and
four renderings of it (:mod:`recworld.report.render`), each file written atomically.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from recworld.io import atomic_write_text, claim_output_dir, mark_output_dir
from recworld.report.analysis import AnalysisOptions
from recworld.report.model import build_report
from recworld.report.render import LONG_COLUMNS, long_csv, to_html, to_markdown, wide_csv
from recworld.report.runs import gather_run_dirs, label_runs, load_run

__all__ = ["LONG_COLUMNS", "write_report"]

_log = logging.getLogger(__name__)

REPORT_KIND = "report"


def _claim(out_dir: Path) -> Path:
    """A report goes into a new or empty folder, an earlier report's, or a run folder (its own report).

    Anything else is refused (:func:`recworld.io.claim_output_dir`): a report never
    overwrites files in a folder recworld did not write.
    """

    def earlier(path: Path) -> bool:
        return (path / "report.md").is_file() or (path / "run.json").is_file()

    return claim_output_dir(out_dir, REPORT_KIND, recognise=earlier)


def write_report(
    run_dirs: Sequence[Path],
    out_dir: Path,
    *,
    seed: int | None = None,
    options: AnalysisOptions | None = None,
) -> dict[str, Path]:
    """Write ``report.md``, ``report.html``, ``metrics.csv`` and ``table.csv`` into ``out_dir``.

    ``run_dirs`` may name run directories or suites (a suite stands for all its
    finished runs). Each file is written atomically. Returns the written paths
    by kind: ``markdown``, ``html``, ``metrics_csv``, ``table_csv``. ``seed``
    None keeps each run's own bootstrap seed (from its ``metrics.json``).
    """
    out_dir = _claim(Path(out_dir))
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
    if not (out_dir / "run.json").is_file():  # a single run's report lives in its run folder, unmarked
        mark_output_dir(out_dir, REPORT_KIND)
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
    return written
