"""``recworld compare RUN_A RUN_B``: one run against another, on the questions both answered.

Per measure: both scores, A - B with its 95% paired bootstrap interval, the
discordant questions and the exact McNemar p-value; then the macro difference
over the shared measures with its stratified sign-flip test. It is
:func:`recworld.scoring.paired_comparison` on the two runs' samples, printed;
the report's paired table uses the same function against its best run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import Field

from recworld.console.options import AsJson, Given, with_options
from recworld.records import Seed, Settings

COLUMNS = ("measure", "n shared", "A", "B", "A - B", "95% CI", "only A right", "only B right", "McNemar p")


def _f(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def compare_runs(run_a: Path, run_b: Path, *, seed: int = 0) -> dict[str, Any]:
    """The comparison as plain data (what ``--json`` prints)."""
    from recworld.errors import DataError
    from recworld.report.runs import label_runs, load_run
    from recworld.scoring import paired_comparison
    from recworld.scoring.thresholds import MIN_PAIRED_N

    runs = [load_run(run_a), load_run(run_b)]
    label_runs(runs)
    a, b = runs
    if a.path.resolve() == b.path.resolve():
        raise DataError("RUN_A and RUN_B are the same run folder", path=a.path)
    try:
        paired = paired_comparison(a.samples, b.samples, seed=seed)
    except DataError as exc:
        raise DataError(
            f"{a.path.name} and {b.path.name} share no answered question ({exc.detail})"
        ) from None
    return {
        "a": {"run": a.label, "path": str(a.path), "settings": a.settings},
        "b": {"run": b.label, "path": str(b.path), "settings": b.settings},
        "min_paired_n": MIN_PAIRED_N,
        **paired.to_json(),
    }


class CompareOptions(Settings):
    """``recworld compare``'s settings: the intervals' seed, and what to print."""

    seed: Annotated[Seed, Field(description="Seed of the bootstrap intervals.")] = 0
    as_json: AsJson = False


@with_options(CompareOptions)
def compare_command(
    run_a: Annotated[Path, typer.Argument(help="A run directory (the A side of A - B).")],
    run_b: Annotated[Path, typer.Argument(help="Another run directory (the B side).")],
    *,
    given: Given,
) -> None:
    """Paired differences of two runs per measure (McNemar, intervals), on the questions both answered."""
    from recworld.console.output import emit_json, print_table

    job: CompareOptions = given.build()
    data = compare_runs(run_a, run_b, seed=job.seed)
    if job.as_json:
        emit_json(data)
        return
    min_n = data["min_paired_n"]
    typer.echo(f"A: {data['a']['run']} ({data['a']['path']})")
    typer.echo(f"B: {data['b']['run']} ({data['b']['path']})")
    rows = []
    for name, m in data["measures"].items():
        p = m["p_value"]
        shown_p = "-" if p is None else (f"{p:.3g}" if m["n"] >= min_n else f"{p:.3g} (untested, n<{min_n})")
        interval = f"{_f(m['ci_low'], True)} to {_f(m['ci_high'], True)}"
        rows.append(
            [
                name,
                m["n"],
                _f(m["score_a"]),
                _f(m["score_b"]),
                _f(m["diff"], True),
                interval,
                m["wins_a"],
                m["wins_b"],
                shown_p,
            ]
        )
    print_table(COLUMNS, rows)
    overall = data["overall"]
    p = overall["p_value"]
    tested = overall["n_min"] >= min_n and p is not None
    typer.echo(
        f"macro A - B over {len(data['measures'])} measures: {_f(overall['diff'], True)} "
        f"[{_f(overall['ci_low'], True)}, {_f(overall['ci_high'], True)}], sign-flip p "
        + (
            f"{p:.3g}"
            if tested and p is not None
            else f"untested (a measure has under {min_n} shared questions)"
        )
    )
    typer.echo(
        f"shared questions: {data['n_common']}; only in A: {data['only_a']}; only in B: {data['only_b']}"
    )
