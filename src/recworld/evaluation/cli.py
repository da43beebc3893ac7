"""``recworld eval``: evaluate one model on a suite, resumably."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from recworld.models.base import AnswerMode


def eval_command(
    suite_dir: Annotated[Path, typer.Argument(help="Suite directory (holds manifest.json, questions/).")],
    model: Annotated[str, typer.Option("--model", help="Model spec, e.g. llamacpp:smollm2-135m.")],
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server URL.")] = None,
    api_key_env: Annotated[
        str, typer.Option("--api-key-env", help="Name of the env var holding the API key.")
    ] = "OPENAI_API_KEY",
    out: Annotated[
        Path | None, typer.Option("--out", help="Run directory (default SUITE/runs/MODEL__MODE__VARIANT).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="First N questions per measure.")] = None,
    measures: Annotated[
        str | None, typer.Option("--measures", help="Comma-separated measure ids (default all).")
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Requests in flight.")] = 8,
    mode: Annotated[AnswerMode, typer.Option("--mode", help="generate or loglik.")] = AnswerMode.GENERATE,
    variant: Annotated[str, typer.Option("--variant", help="Prompt variant.")] = "zero-shot",
    seed: Annotated[int, typer.Option("--seed", help="Seed for backoff jitter and bootstrap CIs.")] = 0,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per request attempt.")] = 120.0,
    max_retries: Annotated[int, typer.Option("--max-retries", help="Retries per request.")] = 6,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on a TTY.")] = True,
) -> None:
    """Evaluate a model on an LRWorld suite; rerun the same command to resume."""
    from pydantic import ValidationError

    from recworld.errors import ConfigError
    from recworld.runner.evaluate import EvalConfig, evaluate

    try:
        config = EvalConfig(
            suite_dir=suite_dir,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            out_dir=out,
            limit=limit,
            measures=tuple(m.strip() for m in measures.split(",") if m.strip()) if measures else None,
            concurrency=concurrency,
            mode=mode,
            variant=variant,
            seed=seed,
            timeout_s=timeout,
            max_retries=max_retries,
            progress=progress,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"option {field}: {first['msg']}") from exc
    run_dir = evaluate(config)
    _print_scores(run_dir)
    typer.echo(f"run: {run_dir}")


def _print_scores(run_dir: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    metrics: dict[str, Any] = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    run: dict[str, Any] = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    table = Table(title=f"{run['model']} ({run['mode']}, {run['variant']})")
    for column in ("measure", "n", "score", "95% CI", "missed", "chance"):
        table.add_column(column, justify="left" if column == "measure" else "right")
    per_measure: dict[str, dict[str, Any]] = metrics.get("measures", {})
    for measure, row in sorted(per_measure.items()):
        table.add_row(
            measure,
            str(row.get("n", "")),
            _fmt(row.get("score")),
            f"{_fmt(row.get('ci_low'))}-{_fmt(row.get('ci_high'))}",
            _fmt(row.get("missed_rate")),
            _fmt(row.get("chance")),
        )
    Console().print(table)
    counts = run.get("counts", {})
    typer.echo(
        f"questions {counts.get('questions', 0)}, errors {counts.get('errors', 0)}, "
        f"sent {counts.get('runner_sent', 0)}, cache hits {counts.get('runner_cache_hits', 0)}, "
        f"resumed {counts.get('resumed', 0)}"
    )


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "-"


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    app.command("eval")(eval_command)
