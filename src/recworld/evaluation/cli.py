"""``recworld eval``: evaluate models on a suite, resumably (``recworld analyze`` is in recworld.report)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from recworld.console.output import JsonOption, ProgressOption
from recworld.evaluation import cli_options as o

if TYPE_CHECKING:
    from recworld.evaluation.config import EvalConfig


def eval_command(
    suite_dir: o.Suite,
    model: o.Models = None,
    config: o.ConfigFile = None,
    base_url: o.BaseUrl = None,
    api_key_env: o.ApiKeyEnv = None,
    out: o.Out = None,
    limit: o.Limit = None,
    measures: o.Measures = None,
    mode: o.Mode = None,
    variant: o.Variant = None,
    max_tokens: o.MaxTokens = None,
    temperature: o.Temperature = None,
    system: o.System = None,
    model_option: o.ModelOption = None,
    orders: o.Orders = None,
    seed: o.Seed = None,
    concurrency: o.Concurrency = None,
    timeout: o.Timeout = None,
    max_retries: o.MaxRetries = None,
    backoff: o.Backoff = None,
    backoff_max: o.BackoffMax = None,
    fail_on_error: o.FailOnError = None,
    dry_run: o.DryRun = False,
    prices: o.Prices = None,
    engine: Annotated[
        str | None, typer.Option("--engine", help="local (default) or ray: replicas answer on a Ray cluster.")
    ] = None,
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", help="Ray cluster to join (default: start a local one).")
    ] = None,
    replicas: Annotated[int | None, typer.Option("--replicas", help="Model replicas (--engine ray).")] = None,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Evaluate a model on an LRWorld suite; rerun the same command to resume.

    Repeat --model, or give a --config file, to evaluate several models one after another.
    """
    values: dict[str, Any] = dict(locals())  # every option by name; None = not given
    from recworld.evaluation.eval_output import dry_run_all, run_all
    from recworld.evaluation.plan import plan_run
    from recworld.evaluation.resolve import resolve_configs

    configs = resolve_configs(values)
    plans = [plan_run(c) for c in configs]  # every model checked before any folder exists
    if dry_run:
        dry_run_all(plans, prices, as_json=as_json)
    else:
        run_all(configs, as_json=as_json)


def build_config(options: dict[str, Any], engine: dict[str, Any]) -> EvalConfig:
    """The :class:`EvalConfig` of parsed options; a bad value is a ConfigError naming its option."""
    from pydantic import ValidationError

    from recworld.console.app import option_error
    from recworld.evaluation.config import EvalConfig
    from recworld.evaluation.resolve import FLAGS
    from recworld.runner import RunnerConfig

    try:
        return EvalConfig(**options, runner=RunnerConfig(**engine))
    except ValidationError as exc:
        raise option_error(exc, FLAGS) from None


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    app.command("eval")(eval_command)
