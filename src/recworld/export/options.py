"""``recworld export``'s settings, declared once: the command's flags and help are generated from them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from recworld.console.options import OUT, Flag, Progress, comma_list
from recworld.records import Settings

__all__ = ["ExportOptions"]


class ExportOptions(Settings):
    """Everything ``recworld export SUITE`` takes besides the suite."""

    to: Annotated[str, Field(description="lm-eval, inspect or hf."), Flag(metavar="FORMAT")]
    out: Annotated[Path, Field(description="New or empty directory, or a previous export."), OUT]
    measures: Annotated[
        tuple[str, ...] | None,
        Field(description="Comma-separated measure ids (default all)."),
        Flag(parse=comma_list, cli_type=str, metavar="IDS"),
    ] = None
    progress: Progress = True
