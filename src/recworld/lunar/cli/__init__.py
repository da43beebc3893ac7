"""``recworld lunar ...``: the LUNAR commands, built from the typed configs and the registered settings.

* :mod:`.options`: how every LUNAR setting shows on the command line, one shared decorator;
* :mod:`.stages`: ``synth``, ``queries``, ``eval``, ``report``, ``ablate``;
* :mod:`.quality`: ``rate``, ``annotate``, ``agreement``;
* :mod:`.output`: what they print (a summary, or one JSON document with ``--json``).

:func:`build_app` reads the context registry when it runs, so a setting registered
before it (a plugin, a test) is a ``--context`` choice with its own options.
"""

from __future__ import annotations

import typer

from recworld.lunar.cli.quality import add_quality_commands
from recworld.lunar.cli.stages import add_stage_commands


def build_app() -> typer.Typer:
    """A fresh ``lunar`` app with every command."""
    app = typer.Typer(
        help="LUNAR: synthesise anchored behaviour logs, write queries and rubrics, evaluate and judge.",
        no_args_is_help=True,
    )
    add_stage_commands(app)
    add_quality_commands(app)
    return app


def register(app: typer.Typer) -> None:
    """Add ``recworld lunar ...`` to the ``recworld`` app."""
    app.add_typer(build_app(), name="lunar")
