"""``recworld eval``: evaluate models on a suite, resumably (``recworld analyze`` is in recworld.report).

The command's settings are generated from :class:`EvalConfig` (one option per
field, nested configs included), and what to run and print (the models, a config
file, a dry run) from :class:`~recworld.evaluation.cli_options.EvalCommand`, so the
command declares no option itself.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from recworld.console.options import Given, with_options
from recworld.evaluation import cli_options as o
from recworld.evaluation.config import EvalConfig

__all__ = ["eval_command_for", "register"]


def eval_command_for(config: type[EvalConfig] = EvalConfig) -> Callable[..., None]:
    """The ``recworld eval`` command for ``config``: a subclass with one more field gets one more option."""

    @with_options(o.EvalCommand, given="command")
    @with_options(config)
    def eval_command(suite_dir: o.Suite, *, given: Given, command: Given) -> None:
        """Evaluate a model on an LRWorld suite; rerun the same command to resume.

        Repeat --model, or give a --config file, to evaluate several models one after another.
        """
        from recworld.errors import ConfigError
        from recworld.evaluation.eval_output import dry_run_all, run_all
        from recworld.evaluation.plan import plan_run
        from recworld.evaluation.resolve import resolve_configs

        job: o.EvalCommand = command.build()
        prices, dry_run, as_json = job.prices, job.dry_run, job.as_json
        if prices is not None and not dry_run:
            raise ConfigError(
                "--prices goes with --dry-run (recworld report takes --prices for a run's cost)"
            )
        configs = resolve_configs(
            suite_dir, list(job.models), given=given, config_file=job.config_file, config=config
        )
        plans = [plan_run(c) for c in configs]  # every model checked before any folder exists
        if dry_run:
            dry_run_all(plans, prices, as_json=as_json)
        else:
            run_all(configs, as_json=as_json)

    return eval_command


def register(app: typer.Typer) -> None:
    """Add this package's commands to the ``recworld`` app."""
    from recworld.evaluation.models_cli import models_command
    from recworld.evaluation.starter import init_command

    app.command("eval")(eval_command_for(EvalConfig))
    app.command("models")(models_command)
    app.command("init")(init_command)
