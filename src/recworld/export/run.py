"""``export_suite``: one suite, one target, one atomically written, byte-reproducible directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from recworld.console.progress import StageProgress
from recworld.errors import ConfigError
from recworld.export import hf, inspect, lm_eval
from recworld.export.common import Suite, check_export_target, export_directory, load_suite, provenance

Writer = Callable[[Suite, Path, dict[str, Any]], list[str]]
TARGETS: dict[str, Writer] = {"lm-eval": lm_eval.write, "inspect": inspect.write, "hf": hf.write}


STEPS = 3  # read the suite, write the target's files, move them into place


def export_suite(
    suite_dir: Path,
    target: str,
    out: Path,
    *,
    measures: tuple[str, ...] | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Export ``suite_dir`` for ``target`` into ``out``; returns the provenance plus the task/config names.

    ``progress``: the steps on stderr (a live display on a terminal, else a plain line per
    step and at least every 30 s).
    """
    writer = TARGETS.get(target)
    if writer is None:
        raise ConfigError(f"unknown export target {target!r}; choose one of: {', '.join(TARGETS)}")
    check_export_target(out)  # a refused --out is one line, before any progress or work
    with StageProgress(enabled=progress, plain=True, label="export") as view:
        view.overall(f"export for {target}", 0, STEPS)
        view.step(f"reading the suite {suite_dir}")
        suite = load_suite(suite_dir, measures)
        meta = provenance(suite, target)
        view.overall(f"export for {target}", 1, STEPS)
        view.step(f"writing {len(suite.measures)} measures for {target}")
        with export_directory(out, meta) as staging:
            names = writer(suite, staging, meta)
            view.overall(f"export for {target}", 2, STEPS)
            view.step(f"moving the export into {out}")
        view.overall(f"export for {target}", STEPS, STEPS)
    return {**meta, "names": names}
