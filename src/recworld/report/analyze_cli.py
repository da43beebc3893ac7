"""``recworld analyze``: run every LRWorld analysis that applies, then write the report.

The command sits in the report layer because it ends in a report; the runs
themselves are planned and run by :mod:`recworld.evaluation.analyze`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from recworld.chat import AnswerMode

if TYPE_CHECKING:
    from recworld.evaluation.analyze import PlanCost


def analyze_command(
    suite_dir: Annotated[Path, typer.Argument(help="Suite directory.")],
    model: Annotated[str, typer.Option("--model", help="Model spec, e.g. llamacpp:smollm2-135m.")],
    all_variants: Annotated[
        bool, typer.Option("--all", help="Every variant that applies, and 5 option orders.")
    ] = False,
    variants: Annotated[
        str | None, typer.Option("--variants", help="Comma-separated variants (besides zero-shot).")
    ] = None,
    measures: Annotated[
        str | None,
        typer.Option(
            "--measures",
            help="Comma-separated measures for every analysis (default: the paper's, per analysis).",
        ),
    ] = None,
    mode: Annotated[
        AnswerMode, typer.Option("--mode", help="generate, loglik or rank.")
    ] = AnswerMode.GENERATE,
    limit: Annotated[int | None, typer.Option("--limit", help="First N questions per measure.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server URL.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Requests in flight.")] = 8,
    seed: Annotated[int, typer.Option("--seed", help="Request seed, variant draws, bootstrap CIs.")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", help="Report directory (default SUITE/report).")
    ] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on a TTY.")] = True,
) -> None:
    """Run every analysis of the paper that applies (each variant its own resumable run), then the report."""
    from recworld.errors import RunError
    from recworld.evaluation.analyze import estimate_plans, plan_runs, run_plans
    from recworld.evaluation.cli import build_config
    from recworld.report.writer import write_report

    options: dict[str, Any] = {
        "suite_dir": suite_dir,
        "model": model,
        "base_url": base_url,
        "limit": limit,
        "mode": mode,
        "seed": seed,
        "measures": tuple(m.strip() for m in measures.split(",") if m.strip()) if measures else None,
    }
    engine: dict[str, Any] = {"concurrency": concurrency, "progress": progress, "seed": seed}
    base = build_config(options, engine)
    chosen = [v.strip() for v in variants.split(",") if v.strip()] if variants else []
    plans = plan_runs(base, all_variants=all_variants, variants=chosen)
    _print_costs(estimate_plans(plans))
    failures = run_plans(plans, say=typer.echo)
    written = write_report([suite_dir], out or suite_dir / "report")
    for path in written.values():
        typer.echo(str(path))
    if failures:
        raise RunError(f"{len(failures)} of {len(plans)} runs failed; rerun to resume: {failures[0]}")


def _print_costs(costs: Sequence[PlanCost]) -> None:
    """The plan and its cost, before anything is sent (the dry run's estimate: 4 characters per token)."""
    for cost in costs:
        again = " (resumes: only unanswered questions are sent)" if cost.resumes else ""
        typer.echo(
            f"plan: {cost.variant}, {cost.orders} order{'s' if cost.orders != 1 else ''}, "
            f"{len(cost.measures)} measure{'s' if len(cost.measures) != 1 else ''} "
            f"({', '.join(cost.measures)}): {cost.requests:,} requests, "
            f"~{cost.prompt_tokens:,} prompt tokens{again}"
        )
    requests = sum(c.requests for c in costs)
    tokens = sum(c.prompt_tokens for c in costs)
    typer.echo(f"plan: {len(costs)} runs, at most {requests:,} requests, ~{tokens:,} prompt tokens in all")
