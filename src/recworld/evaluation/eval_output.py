"""What ``recworld eval`` prints: a score table per run, or one JSON document with ``--json``."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from recworld.capped import RECORD_LIMIT, read_capped
from recworld.errors import RunError

if TYPE_CHECKING:
    from recworld.evaluation.config import EvalConfig
    from recworld.evaluation.plan import RunPlan
    from recworld.scoring.prices import Price
    from recworld.scoring.records import PositionBias

__all__ = ["dry_run_all", "run_all", "run_summary"]

_log = logging.getLogger(__name__)


def run_all(configs: Sequence[EvalConfig], *, as_json: bool) -> None:
    """Evaluate each config in turn; a failed run does not stop the next, but the command exits 3."""
    from recworld.evaluation.run import RunFailedError, evaluate_config

    summaries: list[dict[str, Any]] = []
    failures: list[RunError] = []
    for config in configs:
        try:
            run_dir = evaluate_config(config).run_dir
        except RunFailedError as exc:
            failures.append(exc)
            run_dir = exc.result.run_dir
        if (run_dir / "metrics.json").is_file():
            summaries.append(run_summary(run_dir, type(config)))
            if not as_json:
                print_scores(summaries[-1])
    if as_json:
        from recworld.console.output import emit_json

        emit_json({"runs": summaries})
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise RunError(f"{len(failures)} of {len(configs)} runs failed; first: {failures[0]}")


def run_summary(run_dir: Path, config: type[EvalConfig] | None = None) -> dict[str, Any]:
    """The run as plain data: what ``--json`` prints and the table shows (``config``: its class)."""
    from recworld.evaluation.records import read_run_header
    from recworld.lrworld.catalogue import MEASURES
    from recworld.scoring.records import MetricsRecord

    metrics = MetricsRecord.model_validate_json(read_capped(run_dir / "metrics.json", limit=RECORD_LIMIT))
    header = read_run_header(run_dir / "run.json", *(() if config is None else (config,)))
    order = {m.id: i for i, m in enumerate(MEASURES)}
    keys = ("n", "score", "ci_low", "ci_high", "missed_rate", "errors", "chance")
    counts = header.counts.model_dump()
    if not _sends_requests(header.model):
        counts.pop("runner", None)  # nothing was sent: "sent 45" would be a lie
    return {
        "model": header.model,
        "mode": header.mode,
        "variant": header.variant,
        "settings": header.settings,
        "label": header.label,
        "run_dir": str(run_dir),
        "status": header.status,
        "reason": header.reason,
        "counts": counts,
        "measures": {
            name: {**{k: getattr(row, k) for k in keys}, "flag": _flag(row.position_bias)}
            for name, row in sorted(metrics.measures.items(), key=lambda kv: (order.get(kv[0], 99), kv[0]))
        },
        # Degenerate answering over each question format (all its measures pooled): a warning line each.
        "degenerate": [
            f"{fmt}: {_flag(bias)} of {bias.n_parsed} parsed answers, TV {bias.tv_distance:.2f} from the key"
            for fmt, bias in metrics.positions.items()
            if bias.degenerate and bias.tv_distance is not None
        ],
    }


def _flag(bias: PositionBias) -> str:
    """``A 100%`` when the answers concentrate on one position (scoring.thresholds), else empty."""
    return f"{bias.top_label} {bias.top_share:.0%}" if bias.degenerate and bias.top_share is not None else ""


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_scores(summary: dict[str, Any]) -> None:
    """The score table (plain when piped or narrow: no id is cut) and one line of counts."""
    from recworld.console.output import print_table

    columns = ["measure", "n", "score", "95% CI", "missed", "errors", "chance", "position"]
    rows = [
        [
            name,
            row["n"],
            _fmt(row["score"]),
            f"{_fmt(row['ci_low'])}-{_fmt(row['ci_high'])}",
            _fmt(row["missed_rate"]),
            row["errors"],
            _fmt(row["chance"]),
            row["flag"],
        ]
        for name, row in summary["measures"].items()
    ]
    label = f"; {summary['label']}" if summary.get("label") else ""  # the settings that make it its own run
    typer.echo(f"{summary['model']} ({summary['mode']}, {summary['variant']}{label})")  # piped: no title
    print_table(columns, rows)
    for line in summary["degenerate"]:
        typer.echo(f"degenerate answering ({line}): the score reflects where answers sit, not knowledge")
    counts = summary["counts"]
    line = f"questions {counts['questions']}, errors {counts['errors']}, resumed {counts['resumed']}"
    if "runner" in counts:
        runner = counts["runner"]
        line += f", sent {runner.get('sent', 0)}, cache hits {runner.get('cache_hits', 0)}"
    typer.echo(line)
    typer.echo(f"run: {summary['run_dir']}")


def dry_run_all(plans: Sequence[RunPlan], prices: Path | None, *, as_json: bool) -> None:
    """``--dry-run``: describe every planned run; nothing is sent or written."""
    from recworld.evaluation.dry_run import describe, print_dry_run

    table: Mapping[str, Price] = {}
    if prices is not None:
        from recworld.scoring.prices import read_prices

        priced = read_prices(prices)
        for spec in priced.unmatched([p.spec for p in plans if _sends_requests(p.spec)]):
            _log.warning("%s", priced.warning(spec))
        table = priced
    summaries = [describe(plan, table) for plan in plans]
    if as_json:
        from recworld.console.output import emit_json

        emit_json({"dry_run": True, "runs": summaries})
    else:
        print_dry_run(summaries, priced=prices is not None)


def _sends_requests(spec: str) -> bool:
    """Whether the run's backend sends requests (baselines answer in-process); True if it is unknown now."""
    from recworld.evaluation.records import recorded_backend

    row = recorded_backend(spec)
    return True if row is None else row.sends_requests  # unknown now: show the counters it recorded
