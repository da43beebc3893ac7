"""``write_report``: gather runs, score them, and write report.md, report.html and two CSVs.

The work is one computation (:func:`recworld.report.model.build_report`) and
four renderings of it (:mod:`recworld.report.render`), each file written atomically.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from recworld.console.progress import StageProgress
from recworld.evaluation.records import RUN_KIND
from recworld.io import atomic_write_text, check_output_dir, claim_output_dir, mark_output_dir
from recworld.report.analysis import AnalysisOptions
from recworld.report.latex import to_latex
from recworld.report.model import ReportModel, build_report, report_steps
from recworld.report.render import LONG_COLUMNS, long_csv, to_html, to_markdown, wide_csv
from recworld.report.runs import RunData, gather_run_dirs, label_runs, load_run

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
    progress: bool = False,
    latex: bool = False,
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
    ``latex``: also ``report.tex`` (kind ``latex``), the score tables as booktabs.
    ``progress``: say what it is doing on stderr (plain lines when piped, at
    least every 30 s, with done/total and an estimate).
    """
    out_dir = check_report_dir(out_dir, force=force)
    paths, skipped_paths = gather_run_dirs(list(run_dirs))
    with StageProgress(enabled=progress, plain=True, label="report") as view:
        runs = _scored(paths, seed, view)
        if skipped_paths:
            _log.warning(
                "skipped unfinished runs (no samples.jsonl): %s", ", ".join(str(p) for p in skipped_paths)
            )
        done, total = 0, report_steps(runs) + len(_FILES) + int(latex)

        def step(what: str) -> None:
            nonlocal done
            view.overall("report steps", done, total)
            view.step(what)
            done += 1

        model = build_report(
            runs,
            [p.name for p in skipped_paths],
            options or AnalysisOptions(),
            paired_seed=0 if seed is None else seed,
            step=step,
        )
        claim_output_dir(out_dir, REPORT_KIND, force=force, joins=(RUN_KIND,))
        files = {**_FILES, **({"latex": ("report.tex", to_latex)} if latex else {})}
        written = {kind: out_dir / name for kind, (name, _) in files.items()}
        for kind, (name, render) in files.items():
            step(f"writing {name}")
            atomic_write_text(written[kind], render(model))
        view.overall("report steps", total, total)
    mark_output_dir(out_dir, REPORT_KIND)
    return written


def _scored(paths: Sequence[Path], seed: int | None, view: StageProgress) -> list[RunData]:
    """Each run read, scored and labelled, saying which on ``view``."""
    runs = []
    for i, path in enumerate(paths):
        view.overall("scoring runs", i, len(paths))
        view.step(f"scoring {path.name}")
        runs.append(load_run(path, seed=seed))
    label_runs(runs)
    return runs


_FILES: dict[str, tuple[str, Callable[[ReportModel], str]]] = {
    "markdown": ("report.md", to_markdown),
    "html": ("report.html", to_html),
    "metrics_csv": ("metrics.csv", long_csv),
    "table_csv": ("table.csv", wide_csv),
}
