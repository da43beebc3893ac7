"""``recworld analyze``: run every LRWorld analysis that applies, then write the report.

The command sits in the report layer because it ends in a report; the runs
themselves are planned and run by :mod:`recworld.evaluation.analyze`. Its run
settings are ``recworld eval``'s, generated from the same
:class:`~recworld.evaluation.config.EvalConfig`, less those the analyses choose
themselves (the variant and the option orders) and ``--out``, which here names
the report folder; its own options come from
:class:`~recworld.report.options.AnalyzeOptions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from recworld.console.options import Given, with_options
from recworld.evaluation.config import EvalConfig
from recworld.report.options import AnalyzeOptions

if TYPE_CHECKING:
    from recworld.evaluation.analyze import PlanCost


@with_options(AnalyzeOptions, given="analysis", required=True)
@with_options(EvalConfig, exclude=["out_dir", "variant", "orders"])
def analyze_command(
    suite_dir: Annotated[Path, typer.Argument(help="Suite directory.")],
    *,
    given: Given,
    analysis: Given,
) -> None:
    """Run every analysis of the paper that applies (each variant its own resumable run), then the report."""
    from recworld.errors import RunError
    from recworld.evaluation.analyze import estimate_plans, plan_runs, run_plans, skipped_by_noisy
    from recworld.evaluation.resolve import resolve_configs
    from recworld.report.writer import check_report_dir, write_report

    job: AnalyzeOptions = analysis.build()
    (base,) = resolve_configs(suite_dir, [job.model], given=given)
    target = job.out or suite_dir / "report"
    check_report_dir(target, force=base.force)  # refused now, not after the runs
    chosen = list(job.variants or ())
    plans = plan_runs(base, all_variants=job.all_variants, variants=chosen)
    skipped = skipped_by_noisy(base) if job.all_variants or "noisy" in chosen else ()
    if skipped:
        typer.echo(f"noisy: skipped {', '.join(skipped)}: no user history or profile on screen to change")
    _print_costs(estimate_plans(plans))
    failures = run_plans(plans, say=typer.echo)
    written = write_report([suite_dir], target, force=base.force)
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
