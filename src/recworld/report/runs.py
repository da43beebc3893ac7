"""Find run directories, load their typed records, and score them.

A run directory holds ``samples.jsonl`` (required), ``run.json`` and
``metrics.json``, read with the classes that wrote them
(:class:`~recworld.scoring.records.SampleRecord`,
:class:`~recworld.evaluation.records.RunHeader`,
:class:`~recworld.scoring.records.MetricsRecord`). Metrics are recomputed
from the samples with the current scoring code (seeded, so identical to the
run's ``metrics.json`` when the code has not changed): a report never mixes
numbers from two scoring versions. Tables and charts read the typed record
(``run.metrics.measures[m].score``), never a dict.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recworld.errors import DataError
from recworld.evaluation.records import RunHeader, read_run_header
from recworld.reportkit.settings import describe_setting, describe_settings, distinguishing_keys
from recworld.scoring import MetricsRecord, SampleRecord, load_samples, score_samples

__all__ = ["RunData", "common_settings", "default_out_dir", "gather_run_dirs", "label_runs", "load_run"]


@dataclass
class RunData:
    """One scored run, ready for tables and charts."""

    path: Path
    info: RunHeader | None  # None: the run directory has no run.json
    samples: list[SampleRecord]
    metrics: MetricsRecord
    label: str = field(default="")

    @property
    def status(self) -> str:
        """``finished``, or why the run did not finish (``stopped``, ``too_many_errors``)."""
        return "finished" if self.info is None else self.info.status

    @property
    def reason(self) -> str:
        return "" if self.info is None or self.info.reason is None else self.info.reason

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def model(self) -> str:
        return _first(None if self.info is None else self.info.model, self.metrics.model, self.name)

    @property
    def mode(self) -> str:
        return _first(None if self.info is None else self.info.mode, self.metrics.mode, "generate")

    @property
    def variant(self) -> str:
        return _first(None if self.info is None else self.info.variant, self.metrics.variant, "zero-shot")

    @property
    def dataset(self) -> str:
        return _first(None if self.info is None else self.info.dataset, self.metrics.dataset, "unknown")

    @property
    def settings(self) -> dict[str, Any]:
        """The identity settings that differ from the defaults (``run.json``), by key; {} when unknown."""
        return {} if self.info is None else dict(self.info.settings)

    @property
    def settings_line(self) -> str:
        """Every non-default setting, as one line (``system #1a2b3c 'Be brief.'; max tokens 8``)."""
        return describe_settings(self.settings)

    @property
    def fingerprint(self) -> str:
        return _first(None if self.info is None else self.info.suite_fingerprint, None, "")


def _first(header: str | None, metrics: str | None, default: str) -> str:
    """The run header's value, else the metrics' (a run without run.json), else ``default``."""
    if header is not None:
        return header
    return default if metrics is None else metrics


def _is_run(path: Path) -> bool:
    return (path / "samples.jsonl").is_file()


def _is_suite(path: Path) -> bool:
    return (path / "runs").is_dir() and not _is_run(path)


def gather_run_dirs(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """Run directories named by ``paths`` (a SUITE stands for ``SUITE/runs/*``), and skipped ones.

    A directory inside a suite's ``runs/`` without ``samples.jsonl`` is an
    unfinished run: it is skipped and listed, not an error. A directory named
    explicitly must be a run or a suite.
    """
    runs: list[Path] = []
    skipped: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if _is_run(path):
            runs.append(path)
        elif _is_suite(path):
            for child in sorted(
                p for p in (path / "runs").iterdir() if p.is_dir() and not p.name.startswith(".")
            ):
                (runs if _is_run(child) else skipped).append(child)
        elif path.exists():
            raise DataError("neither a run directory (no samples.jsonl) nor a suite (no runs/)", path=path)
        else:
            raise DataError("no such directory", path=path)
    unique: list[Path] = []
    for run in runs:
        if run.resolve() not in {u.resolve() for u in unique}:
            unique.append(run)
    if not unique:
        where = ", ".join(str(p) for p in paths)
        raise DataError(f"no finished runs (directories with samples.jsonl) found in {where}")
    return unique, skipped


def _stored_seed(path: Path) -> int:
    """The bootstrap seed the run used for ``metrics.json`` (0 when absent, unreadable or outdated)."""
    target = path / "metrics.json"
    if not target.is_file():
        return 0
    try:
        return MetricsRecord.read(target).seed
    except DataError:
        return 0


def load_run(path: Path, *, seed: int | None = None) -> RunData:
    """Read and score one run directory.

    ``seed`` None reuses the seed of the run's own ``metrics.json``, so the
    report's intervals are the runner's.
    """
    run_json = path / "run.json"
    info = read_run_header(run_json) if run_json.is_file() else None
    samples = load_samples(path / "samples.jsonl")
    if not samples:
        raise DataError("no samples", path=path / "samples.jsonl")
    try:
        metrics = score_samples(samples, seed=_stored_seed(path) if seed is None else seed)
    except DataError as exc:
        raise DataError(exc.detail, path=path / "samples.jsonl", field=exc.field) from None
    return RunData(path=path, info=info, samples=samples, metrics=metrics)


def label_runs(runs: Sequence[RunData]) -> None:
    """Give each run a row label that tells it apart from the others (see :mod:`recworld.reportkit.settings`).

    The model spec, plus mode, variant and orders when not the defaults, plus
    each non-default setting whose value differs between the runs shown. Two
    runs of one dataset still alike get their directory name added.
    """
    varying = distinguishing_keys([run.settings for run in runs])
    for run in runs:
        extras = [x for x, default in ((run.mode, "generate"), (run.variant, "zero-shot")) if x != default]
        orders = len({s.order for s in run.samples})
        extras += [f"{orders} orders"] if orders > 1 else []
        extras += [describe_setting(k, run.settings[k]) for k in varying if k in run.settings]
        run.label = run.model + (f" ({'; '.join(extras)})" if extras else "")
    seen: dict[tuple[str, str], int] = {}
    for run in runs:
        seen[(run.dataset, run.label)] = seen.get((run.dataset, run.label), 0) + 1
    for run in runs:
        if seen[(run.dataset, run.label)] > 1:
            run.label = f"{run.label} · {run.name}"


def common_settings(runs: Sequence[RunData]) -> str:
    """The non-default settings every run shares (so no label names them), as one line; empty if none."""
    if not runs:
        return ""
    shared = [k for k in runs[0].settings if k not in distinguishing_keys([r.settings for r in runs])]
    return describe_settings(runs[0].settings, shared)


def default_out_dir(paths: Sequence[Path]) -> Path:
    """Where ``recworld report`` writes when no ``--out`` is given.

    One suite: ``SUITE/report``. Runs: their common parent, except that runs
    inside ``SUITE/runs/`` report to ``SUITE/report``.
    """
    resolved = [Path(p).resolve() for p in paths]
    if len(resolved) == 1 and _is_suite(resolved[0]):
        return resolved[0] / "report"
    common = Path(os.path.commonpath([str(p) for p in resolved]))
    if common.name == "runs" and (common.parent / "manifest.json").is_file():
        return common.parent / "report"
    if _is_suite(common):
        return common / "report"
    return common
