"""``recworld measures`` and ``recworld build``.

Both commands' options are generated from their configs (:class:`BuildOptions`,
which nests :class:`~recworld.lrworld.config.BuildConfig`; ``JsonOutput``): this
module declares none.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from recworld.console import resumable
from recworld.console.options import Given, JsonOutput, with_options
from recworld.console.output import emit_json, print_table
from recworld.lrworld.build_options import BuildOptions
from recworld.lrworld.build_view import BuildView

if TYPE_CHECKING:
    from recworld.lrworld.manifest import SuiteManifest

_log = logging.getLogger(__name__)


MEASURE_COLUMNS = ("measure", "scale", "factor", "format", "domains", "requires")
BUILD_COLUMNS = ("measure", "questions", "skipped", "seconds")


@with_options(JsonOutput)
def measures(*, given: Given) -> None:
    """List the LRWorld measure catalogue: id, scale, factor, format, domains, required fields.

    On a terminal too narrow for the table, or when piped, each measure is one
    tab-separated line, so no id is ever cut short.
    """
    from recworld.lrworld.catalogue import MEASURES

    rows = [
        {
            "measure": m.id,
            "scale": m.scale.value,
            "factor": m.factor.value,
            "format": m.format.value,
            "domains": sorted(d.value for d in m.domains),
            "requires": list(m.requires),
        }
        for m in MEASURES
    ]
    if given.build().as_json:
        emit_json(rows)
        return
    cells = [[",".join(v) if isinstance(v, list) else v for v in row.values()] for row in rows]
    print_table(MEASURE_COLUMNS, [[cell or "-" for cell in row] for row in cells], title="LRWorld measures")


@with_options(BuildOptions, required=True)
def build(*, given: Given) -> None:
    """Build an LRWorld suite: questions/<measure>.jsonl, dataset/ and manifest.json."""
    from recworld.data import resolve_dataset
    from recworld.data.image_refs import ImageRoots, dataset_folder
    from recworld.lrworld.suite import build_suite

    job: BuildOptions = given.build()
    out, metadata = job.out, job.metadata
    roots = ImageRoots.of([dataset_folder(job.dataset), *([metadata.parent] if metadata else [])])
    roots += ImageRoots.of(job.image_roots, check=True)
    unchanged = f"nothing was written to {out} (a suite is replaced only when its build completes)"
    with resumable(hint=unchanged), BuildView(enabled=job.progress) as view:
        view.loading(job.dataset)
        data = resolve_dataset(job.dataset, job.format, metadata)
        manifest = build_suite(data, job.build, out, image_roots=roots, force=job.force, progress=view)
    if metadata is not None:
        from recworld.data.cli import echo_match_report

        echo_match_report(data.source)
    _print_manifest(manifest, out, as_json=job.as_json)


def _print_manifest(manifest: SuiteManifest, out: Path, *, as_json: bool = False) -> None:
    """The per-measure table and stage timings on stdout (or the manifest as JSON); warnings logged.

    The table is :func:`~recworld.console.output.print_table`'s: tab-separated lines when
    piped or too narrow, so no measure id or skip reason is cut.
    """
    if manifest.images.warning:
        _log.warning("%s", manifest.images.warning)
    for gate in manifest.gates:
        if gate.outcome == "skipped":  # one line per failed gate, naming every measure it cost
            _log.warning(
                "%s skipped: %s (--require-neural makes this fatal; --allow-weak-neumf builds them anyway)",
                ", ".join(gate.measures),
                gate.reason,
            )
    if as_json:
        emit_json({"suite": str(out), **manifest.to_json()})
        return
    timings = manifest.timings
    rows = [
        [measure_id, count, "", f"{timings.get(f'measure:{measure_id}', 0.0):.2f}"]
        for measure_id, count in manifest.counts.items()
    ]
    rows += [[measure_id, 0, reason, ""] for measure_id, reason in manifest.skipped.items()]
    print_table(BUILD_COLUMNS, rows, title=f"LRWorld suite {manifest.dataset} -> {out}")
    shared = {k: v for k, v in timings.items() if not k.startswith("measure:")}
    typer.echo("stages: " + ", ".join(f"{k} {v:.2f}s" for k, v in shared.items()))
    short = manifest.users_skipped.too_short_history
    if short:
        typer.echo(f"{short} users skipped: {manifest.users_skipped.rule}")
    flagged = manifest.shortcuts.flagged if manifest.shortcuts is not None else []
    if flagged:
        shown = "; ".join(
            f"{row.measure} {row.shortcut} {row.score:.2f} (chance {row.chance:.2f})"
            + (f", {row.remedy}" if row.remedy else "")
            for row in flagged
        )
        typer.echo(f"shortcuts above chance (manifest.json 'shortcuts', report 'Shortcuts'): {shown}")


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    app.command("measures")(measures)
    app.command("build")(build)
