"""The ``recworld`` command line.

Each package adds its own commands through a ``register(app)`` function in its
``cli`` module, so this file only assembles them. :func:`recworld.console.app.run`
gives every command the same terminal behaviour: one ``recworld: error: ...``
style (exit 2 for a user error, 3 for a failed run), plain help wrapped at 80
columns, and a Ctrl-C message with exit 130. Command modules import their heavy
libraries inside the command functions so ``recworld --help`` stays fast.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from recworld.console import LogLevel, configure_logging

app = typer.Typer(
    name="recworld",
    help="Measure how well large language models understand users (LRWorld and LUNAR).",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _register_all() -> None:
    from recworld.data import cli as data_cli
    from recworld.evaluation import cli as evaluation_cli
    from recworld.export import cli as export_cli
    from recworld.lrworld import cli as lrworld_cli
    from recworld.lunar import cli as lunar_cli
    from recworld.multimodal import cli as multimodal_cli
    from recworld.report import cli as report_cli

    for module in (data_cli, lrworld_cli, multimodal_cli, evaluation_cli, report_cli, lunar_cli, export_cli):
        module.register(app)


def _show_version(value: bool) -> None:
    if value:
        from recworld import __version__

        typer.echo(f"recworld {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    log_level: Annotated[
        LogLevel,
        typer.Option(
            "--log-level",
            envvar="RECWORLD_LOG_LEVEL",
            case_sensitive=False,
            help="Log messages shown on stderr, from 'debug' (most) to 'error' (fewest).",
        ),
    ] = LogLevel.warning,
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_show_version, help="Print the version and exit."),
    ] = False,
) -> None:
    """Measure how well large language models understand users (LRWorld and LUNAR)."""
    configure_logging(log_level)


_register_all()


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app with the shared error, help and Ctrl-C behaviour; returns the exit code."""
    from recworld.console.app import run

    return run(app, argv, prog_name="recworld")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
