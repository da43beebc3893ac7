"""The parameters of ``recworld eval`` that are not settings of a run: what to run, and what to print.

Every run setting (``--limit``, ``--system``, ``--timeout``, ...) is generated
from :class:`~recworld.evaluation.config.EvalConfig` by
:func:`recworld.console.options.with_options`; only the suite argument, the
models, the config file and the dry run are declared here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

SPECS = "openai:NAME, hf:ORG/NAME, llamacpp:NAME, vllm:NAME, or a baseline: random, popularity, itemknn"

Suite = Annotated[
    Path, typer.Argument(metavar="SUITE", help="Suite directory (holds manifest.json, questions/).")
]
Models = Annotated[
    list[str] | None,
    typer.Option("--model", metavar="SPEC", help=f"Model spec; repeat for several models. Forms: {SPECS}."),
]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config", metavar="FILE", help="TOML file of settings and [[models]] (see docs/evaluation.md)."
    ),
]
DryRun = Annotated[
    bool,
    typer.Option("--dry-run", help="Print request counts and the first prompt per measure; send nothing."),
]
Prices = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        metavar="FILE",
        help="With --dry-run: JSON lines or CSV of model, input, output USD per 1M tokens "
        "(docs/evaluation.md).",
    ),
]
