"""The parameters of ``recworld eval`` that are not settings of a run: what to run, and what to print.

Every run setting (``--limit``, ``--system``, ``--timeout``, ...) is generated
from :class:`~recworld.evaluation.config.EvalConfig`, and the command's own
options (``--model``, ``--config``, ``--dry-run``, ``--prices``, ``--json``) from
:class:`EvalCommand`, both by :func:`recworld.console.options.with_options`;
only the suite argument is declared here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import Field

from recworld.console.options import AsJson, Flag
from recworld.models.registry import spec_forms
from recworld.records import Settings

Suite = Annotated[
    Path, typer.Argument(metavar="SUITE", help="Suite directory (holds manifest.json, questions/).")
]


class EvalCommand(Settings):
    """What ``recworld eval`` runs and prints, beside the run settings (never a config-file key)."""

    models: Annotated[
        tuple[str, ...],
        Field(description=f"Model spec; repeat for several models. Forms: {spec_forms()}."),
        Flag("--model", metavar="SPEC"),
    ] = ()
    config_file: Annotated[
        Path | None,
        Field(description="TOML file of settings and [[models]] (see docs/evaluation.md)."),
        Flag("--config", metavar="FILE"),
    ] = None
    dry_run: Annotated[
        bool, Field(description="Print request counts and the first prompt per measure; send nothing.")
    ] = False
    prices: Annotated[
        Path | None,
        Field(
            description="With --dry-run: JSON lines or CSV of model, input, output USD per 1M tokens "
            "(docs/evaluation.md)."
        ),
        Flag(metavar="FILE"),
    ] = None
    as_json: AsJson = False
