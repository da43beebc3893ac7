"""What the ``recworld lunar`` commands print: a readable summary, or one JSON document with ``--json``.

Results go to stdout; progress, warnings and the failure summary go to stderr, so
``--json`` output can be piped as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

if TYPE_CHECKING:
    from recworld.lunar.llm.plan import PlannedStage
    from recworld.lunar.report.document import ReportResult
    from recworld.lunar.store.outputs import EvalRun, QueriesRun, StageCounts, SynthManifest

R = TypeVar("R")


def tracked(
    command: str,
    progress: bool,
    call: Callable[[], R],
    plan: Callable[[], Mapping[str, PlannedStage]] | None = None,
) -> R:
    """Run one stage with its progress (a display on a terminal, plain lines elsewhere) and Ctrl-C's k/N.

    ``plan`` (the command's dry run) feeds the lines' total and a local model's cost estimate.
    """
    import sys

    from recworld.lunar.cli.progress import BackgroundPlan, CostEstimate, PieceLines
    from recworld.lunar.llm.tracking import Sink, tracking

    background = BackgroundPlan(plan) if plan is not None else None
    sinks: list[Sink] = [CostEstimate(command, background)] if background is not None else []
    if progress and not sys.stderr.isatty():
        sinks.append(PieceLines(command, background))
    with tracking(command, progress=progress, sinks=sinks):
        return call()


def emit(as_json: bool, data: Mapping[str, Any], lines: Sequence[str]) -> None:
    if as_json:
        from recworld.console.output import emit_json

        emit_json(dict(data))
        return
    for line in lines:
        typer.echo(line)


def _pieces(counts: StageCounts) -> str:
    return f"{counts.failures} of {counts.asked} pieces failed, {counts.llm_calls} LLM calls"


def synth_done(out: Path, manifest: SynthManifest, *, as_json: bool) -> None:
    c = manifest.counts
    text = (
        f"wrote {out}: {c.users} users ({c.dropped_users} dropped), {c.weeks} weeks, {c.slots} slots, "
        f"{c.records} records; {_pieces(c)}"
    )
    lines = [text]
    privacy = manifest.release.privacy if manifest.release is not None else None
    if privacy is not None and privacy.risks is not None:  # the release card's risks, on the terminal too
        lines += [f"  risk {line}" for line in privacy.risks.lines()]
        lines.append(f"  release card: {out / 'release_card.md'}")
    data = {"command": "synth", "out": str(out), "counts": c.model_dump(mode="json")}
    if privacy is not None and privacy.risks is not None:
        data["risks"] = privacy.risks.model_dump(mode="json")
    emit(as_json, data, lines)


def queries_done(root: Path, run: QueriesRun, *, as_json: bool) -> None:
    c = run.counts
    text = f"wrote {c.queries} queries with rubrics to {root} ({c.dropped} dropped); {_pieces(c)}"
    emit(as_json, {"command": "queries", "root": str(root), "counts": c.model_dump(mode="json")}, [text])


def eval_done(command: str, named: Mapping[str, EvalRun], *, as_json: bool) -> None:
    """One line per (model, context or variant)."""
    lines = [
        f"{run.model} / {name}: {run.counts.judged} judged of {run.counts.queries} "
        f"({run.counts.answer_errors} answer errors, {run.counts.judge_errors} judge errors)"
        for name, run in named.items()
    ]
    data = {
        "command": command,
        "runs": [
            {"model": r.model, "judge": r.judge, "setting": name, "counts": r.counts.model_dump(mode="json")}
            for name, r in named.items()
        ],
    }
    emit(as_json, data, lines)


def ablate_done(root: Path, named: Mapping[str, EvalRun], *, as_json: bool) -> None:
    """One line per variant run, then one per part the queries could not fill, with why."""
    from recworld.lunar.answering.ablate import AblateRun

    record = AblateRun.of(root)
    skipped = record.skipped if record is not None else {}
    if as_json:
        data = {
            "command": "ablate",
            "runs": [
                {
                    "model": r.model,
                    "judge": r.judge,
                    "setting": name,
                    "counts": r.counts.model_dump(mode="json"),
                }
                for name, r in named.items()
            ],
            "skipped": skipped,
        }
        emit(True, data, [])
        return
    eval_done("ablate", named, as_json=False)
    for parts, why in record.reasons() if record is not None else []:
        typer.echo(f"not run: {', '.join(parts)}: {why}")


def report_done(root: Path, written: ReportResult, *, as_json: bool) -> None:
    """The files written (as ``recworld report`` prints), or the rows and Figure 4's points as JSON."""
    if as_json:
        rows = [r.flat() for r in written.rows]
        points = [
            {"model": p.model, "personalisation": p.personalisation.mean, "privacy": p.privacy.mean}
            for p in written.points
        ]
        emit(True, {"command": "report", "root": str(root), "rows": rows, "privacy_points": points}, [])
        return
    emit(False, {}, [str(path) for path in written.written])


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.4f}"


def dry_run(command: str, stages: Mapping[str, PlannedStage], prices: Path | None, *, as_json: bool) -> None:
    """``--dry-run``: requests per stage, the first prompt of each, and with ``--prices`` the cost."""
    from recworld.lunar.llm.plan import priced
    from recworld.scoring.prices import read_prices

    stages = priced(stages, read_prices(prices) if prices is not None else {})
    total = sum(s.requests for s in stages.values())
    costs = [s.cost_usd for s in stages.values() if s.cost_usd is not None]
    cost = sum(costs) if costs else None
    if as_json:
        plan = {name: s.to_json() for name, s in stages.items()}
        emit(
            True,
            {"dry_run": True, "command": command, "requests": total, "cost_usd": cost, "stages": plan},
            [],
        )
        return
    from recworld.console.output import print_table

    columns = ["stage", "requests", "count", "~prompt tokens", "max reply tokens"]
    columns += ["est. cost"] if prices is not None else []
    rows = []
    for name, s in stages.items():
        row = [
            name,
            s.requests,
            "exact" if s.exact else "at most",
            s.prompt_tokens or "-",
            s.max_reply_tokens,
        ]
        rows.append(row + ([_money(s.cost_usd)] if prices is not None else []))
    typer.echo(f"lunar {command} --dry-run")
    print_table(columns, rows)
    line = f"total: at most {total} requests (before retries)"
    if prices is not None:
        line += f", at most {_money(cost)} for the stages with a rendered prompt"
    typer.echo(line)
    for name, s in stages.items():
        if s.first_prompt is not None:
            typer.echo(f"\n--- first prompt of {name} ---")
            for message in s.first_prompt:
                typer.echo(f"[{message.role}]\n{message.content}")
    later = [name for name, s in stages.items() if s.first_prompt is None]
    if later:
        typer.echo(f"\n(prompts of {', '.join(later)} are built at run time from earlier replies or records)")
    typer.echo("\ndry run: nothing was sent and nothing was written")
