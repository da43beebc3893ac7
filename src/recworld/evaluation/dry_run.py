"""``recworld eval --dry-run``: what would be sent and what it would cost, before any of it is.

Nothing is sent and nothing is written: the plan (:mod:`recworld.evaluation.plan`)
has already checked the inputs, and this module only renders prompts in
memory. Prompt tokens are estimated at 4 characters per token (no tokenizer
is loaded); completion tokens are counted at ``max_tokens``, an upper bound,
in generate mode, and as none in loglik and rank modes, which generate nothing.
A prices file with no row for a model is a warning naming the file, never a
silent "no price".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from recworld.chat import AnswerMode
from recworld.evaluation.estimate import CHARS_PER_TOKEN, tokens
from recworld.evaluation.plan import RunPlan, render_all

if TYPE_CHECKING:
    from recworld.scoring.prices import Price

__all__ = ["CHARS_PER_TOKEN", "describe", "print_dry_run"]


def describe(plan: RunPlan, prices: Mapping[str, Price]) -> dict[str, Any]:
    """One run's dry-run summary as plain data (what ``--json`` prints)."""
    rendered = render_all(plan, plan.asked)
    reply = plan.config.reply_tokens if plan.config.mode is AnswerMode.GENERATE else 0
    price = prices.get(plan.spec)
    measures: dict[str, dict[str, Any]] = {}
    for asked, prompt in zip(plan.asked, rendered, strict=True):
        entry = measures.setdefault(
            asked.question.measure,
            {"requests": 0, "prompt_tokens": 0, "first_prompt": [m.to_json() for m in prompt.messages]},
        )
        entry["requests"] += 1
        entry["prompt_tokens"] += tokens(sum(len(m.content) for m in prompt.messages))
    for entry in measures.values():
        entry["max_completion_tokens"] = entry["requests"] * reply
        entry["cost_usd"] = (
            None
            if price is None
            else (
                entry["prompt_tokens"] * price.input_per_m
                + entry["max_completion_tokens"] * price.output_per_m
            )
            / 1e6
        )
    costs = [e["cost_usd"] for e in measures.values()]
    return {
        "model": plan.spec,
        "mode": plan.config.mode.value,
        "variant": plan.config.variant,
        "run_dir": str(plan.run_dir),
        "resumes": plan.previous is not None,
        "requests": len(plan.asked),
        "cost_usd": None if price is None else sum(c for c in costs if c is not None),
        "measures": measures,
    }


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.4f}"


def print_dry_run(summaries: Sequence[dict[str, Any]], *, priced: bool) -> None:
    """The human form: per run a table of requests and cost, then the first prompt of each measure."""
    import typer

    from recworld.console.output import print_table

    for run in summaries:
        typer.echo(f"{run['model']} ({run['mode']}, {run['variant']}) -> {run['run_dir']}")
        columns = ["measure", "requests", "~prompt tokens", "max reply tokens"]
        columns += ["est. cost"] if priced else []
        rows = []
        for measure, entry in run["measures"].items():
            row = [measure, entry["requests"], entry["prompt_tokens"], entry["max_completion_tokens"]]
            rows.append(row + ([_money(entry["cost_usd"])] if priced else []))
        print_table(columns, rows)
        total = f"total: {run['requests']} requests"
        if priced:
            total += f", at most {_money(run['cost_usd'])}" if run["cost_usd"] is not None else ", no price"
        if run["resumes"]:
            total += " (the folder holds an earlier run: only unanswered questions would be sent)"
        typer.echo(total)
        for measure, entry in run["measures"].items():
            typer.echo(f"\n--- first prompt of {measure} ---")
            for message in entry["first_prompt"]:
                typer.echo(f"[{message['role']}]\n{message['content']}")
        typer.echo("")
    typer.echo("dry run: nothing was sent and nothing was written")
