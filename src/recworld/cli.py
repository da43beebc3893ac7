"""The ``recworld`` command line.

Each package adds its own commands through a ``register(app)`` function in its
``cli`` module, so this file only assembles them and turns
:class:`~recworld.errors.RecWorldError` into one line on stderr and exit code 2.
Command modules import their heavy libraries inside the command functions so
``recworld --help`` stays fast.
"""

from __future__ import annotations

import sys

import typer

from recworld.errors import RecWorldError

app = typer.Typer(
    name="recworld",
    help="Measure how well large language models understand users (LRWorld and LUNAR).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_all() -> None:
    from recworld.data import cli as data_cli
    from recworld.lrworld import cli as lrworld_cli
    from recworld.lunar import cli as lunar_cli
    from recworld.multimodal import cli as multimodal_cli
    from recworld.report import cli as report_cli
    from recworld.runner import cli as runner_cli

    for module in (data_cli, lrworld_cli, multimodal_cli, runner_cli, report_cli, lunar_cli):
        module.register(app)


@app.callback()
def _root() -> None:
    """Measure how well large language models understand users (LRWorld and LUNAR)."""


_register_all()


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, mapping RecWorld errors to a clear message and exit 2."""
    try:
        app(args=argv, prog_name="recworld")
    except RecWorldError as exc:
        typer.echo(f"recworld: error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        typer.echo("recworld: interrupted; rerun the same command to resume", err=True)
        return 130
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
