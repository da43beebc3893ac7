"""``recworld measures`` and ``recworld build``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from recworld.console import resumable
from recworld.console.output import JsonOption, ProgressOption, emit_json, print_table
from recworld.lrworld.build_view import BuildView

if TYPE_CHECKING:
    from recworld.lrworld.config import BuildConfig
    from recworld.lrworld.manifest import SuiteManifest

_log = logging.getLogger(__name__)


MEASURE_COLUMNS = ("measure", "scale", "factor", "format", "domains", "requires")


def measures(as_json: JsonOption = False) -> None:
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
    if as_json:
        emit_json(rows)
        return
    cells = [[",".join(v) if isinstance(v, list) else v for v in row.values()] for row in rows]
    print_table(MEASURE_COLUMNS, [[cell or "-" for cell in row] for row in cells], title="LRWorld measures")


# The build's sampling options, named once here so the command's signature stays readable.
NegativesOption = Annotated[
    str,
    typer.Option(
        "--negatives",
        help="hit@1 negatives: 'uniform' (the paper), 'popularity' (weighted by interaction count) or "
        "'matched' (from the positive's popularity bin, 1/30 of the catalogue).",
    ),
]
DistractorsOption = Annotated[
    str,
    typer.Option(
        "--distractors",
        help="Attribute MCQ wrong values: 'uniform' (the paper) or 'popularity' (weighted by use).",
    ),
]
TaxoLevelOption = Annotated[
    int,
    typer.Option("--taxo-level", help="taxo_interm: category depth asked (1 = under the root, the paper)."),
]
RulesOption = Annotated[
    str,
    typer.Option(
        "--rules", help="assoc_rule ground truth: rank consequents by 'confidence' (the paper) or 'lift'."
    ),
]
MinSupportOption = Annotated[
    float, typer.Option("--min-support", help="assoc_rule: minimum rule support (the paper: 0.01).")
]
LabelRulesOption = Annotated[
    str | None,
    typer.Option(
        "--label-rules",
        help="Label support and margins, KEY=VALUE,...: memory_min_support (3), memory_margin (0.005), "
        "rule_margin (0.05, or 'none': no consequent is ever a negative).",
    ),
]
ImageRootOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--image-root", help="A folder item images may come from besides the dataset's (repeatable)."
    ),
]


AllowWeakNeuMFOption = Annotated[
    bool,
    typer.Option(
        "--allow-weak-neumf",
        help="Build the neu_* measures even if the NeuMF cosine space does not beat popularity on "
        "held-out HR@10 (otherwise they are skipped, with the figures in the manifest).",
    ),
]
RequireNeuralOption = Annotated[
    bool,
    typer.Option(
        "--require-neural",
        help="Fail (exit 3, nothing written) when the NeuMF cosine space does not beat popularity, "
        "instead of skipping the neu_* measures.",
    ),
]
HistoryTextOption = Annotated[
    str,
    typer.Option(
        "--history-text",
        help="Attribute MCQ history lines: 'text' (title, year, genres / brand, category: the paper's) "
        "or 'title' (so the asked value is not on screen).",
    ),
]


def build(
    dataset: Annotated[
        str, typer.Option("--dataset", help="A fetched dataset name, a dataset folder, or raw files.")
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", help="Suite directory: new, empty, or a suite (rebuilt atomically; runs/ kept)."
        ),
    ],
    format: Annotated[
        str | None, typer.Option("--format", help="Source format (default: detect from the files).")
    ] = None,
    metadata: Annotated[
        Path | None, typer.Option("--metadata", help="Item metadata CSV/JSONL to join (cast, director, ...).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random draw in the build.")] = 0,
    per_measure: Annotated[
        int, typer.Option("--per-measure", help="Questions per measure (fewer if fewer targets exist).")
    ] = 1000,
    measures: Annotated[
        str | None, typer.Option("--measures", help="Comma-separated measure ids (default: all that apply).")
    ] = None,
    negatives: NegativesOption = "uniform",
    distractors: DistractorsOption = "uniform",
    taxo_level: TaxoLevelOption = 1,
    rules: RulesOption = "confidence",
    min_support: MinSupportOption = 0.01,
    label_rules: LabelRulesOption = None,
    image_root: ImageRootOption = None,
    force: Annotated[
        bool, typer.Option("--force", help="Write into an --out that is not a suite (its files are kept).")
    ] = False,
    allow_weak_neumf: AllowWeakNeuMFOption = False,
    require_neural: RequireNeuralOption = False,
    history_text: HistoryTextOption = "text",
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Build an LRWorld suite: questions/<measure>.jsonl, dataset/ and manifest.json."""
    from recworld.data import resolve_dataset
    from recworld.data.image_refs import ImageRoots, dataset_folder
    from recworld.lrworld.suite import build_suite

    options = {"negatives": negatives, "distractors": distractors, "taxo_level": taxo_level, "rules": rules}
    options |= {"min_support": min_support, "allow_weak_neumf": allow_weak_neumf}
    options |= {"require_neural": require_neural, "history_text": history_text, **_label_rules(label_rules)}
    config = _build_config(seed, per_measure, measures, options)
    roots = ImageRoots.of([dataset_folder(dataset), *([metadata.parent] if metadata else [])])
    roots += ImageRoots.of(image_root or (), check=True)
    unchanged = f"nothing was written to {out} (a suite is replaced only when its build completes)"
    with resumable(hint=unchanged), BuildView(enabled=progress) as view:
        view.loading(dataset)
        data = resolve_dataset(dataset, format, metadata)
        manifest = build_suite(data, config, out, image_roots=roots, force=force, progress=view)
    if metadata is not None:
        from recworld.data.cli import echo_match_report

        echo_match_report(data.source)
    _print_manifest(manifest, out, as_json=as_json)


def _label_rules(text: str | None) -> dict[str, Any]:
    """``--label-rules`` as config fields (validated with the rest of the config)."""
    from recworld.errors import ConfigError

    out: dict[str, Any] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in ("memory_min_support", "memory_margin", "rule_margin"):
            raise ConfigError(f"--label-rules: {part.strip()!r} is not KEY=VALUE with a known key")
        out[key.strip()] = None if value.strip().lower() == "none" else value.strip()
    return out


def _build_config(seed: int, per_measure: int, measures: str | None, options: dict[str, Any]) -> BuildConfig:
    from pydantic import ValidationError

    from recworld.console.app import option_error
    from recworld.lrworld.config import BuildConfig

    chosen = tuple(m.strip() for m in measures.split(",") if m.strip()) if measures else None
    try:
        return BuildConfig.model_validate(
            {"seed": seed, "per_measure": per_measure, "measures": chosen, **options}
        )
    except ValidationError as exc:
        raise option_error(exc) from None


def _print_manifest(manifest: SuiteManifest, out: Path, *, as_json: bool = False) -> None:
    """The per-measure table and stage timings on stdout (or the manifest as JSON); warnings logged."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

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
    table = Table(title=escape(f"LRWorld suite {manifest.dataset} -> {out}"))
    for column in ("measure", "questions", "skipped", "seconds"):
        table.add_column(column, justify="right" if column in ("questions", "seconds") else "left")
    for measure_id, count in manifest.counts.items():
        table.add_row(measure_id, str(count), "", f"{timings.get(f'measure:{measure_id}', 0.0):.2f}")
    for measure_id, reason in manifest.skipped.items():
        table.add_row(measure_id, "0", reason, "")
    console = Console()
    console.print(table)
    shared = {k: v for k, v in timings.items() if not k.startswith("measure:")}
    console.print("stages: " + ", ".join(f"{k} {v:.2f}s" for k, v in shared.items()))
    short = manifest.users_skipped.too_short_history
    if short:
        console.print(f"{short} users skipped: {manifest.users_skipped.rule}")
    flagged = manifest.shortcuts.flagged if manifest.shortcuts is not None else []
    if flagged:
        console.print(
            escape(
                "shortcuts above chance (manifest.json 'shortcuts', report 'Shortcuts'): "
                + "; ".join(
                    f"{row.measure} {row.shortcut} {row.score:.2f} (chance {row.chance:.2f})"
                    + (f", {row.remedy}" if row.remedy else "")
                    for row in flagged
                )
            )
        )


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    app.command("measures")(measures)
    app.command("build")(build)
