"""The settings of ``recworld lunar annotate`` and ``lunar agreement``, declared once.

Their flags and help are generated from these classes (:mod:`recworld.console.options`);
the zone flag is LUNAR's shared ``UserZone``, ``--force`` and ``--json`` the shared ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from recworld.console.options import OUT, AsJson, Flag, Force, comma_list
from recworld.lunar.config import HISTORY_RECORDS, UserZone
from recworld.records import MAX_INT, Seed, Settings

__all__ = ["AgreementOptions", "AnnotateOptions"]


class AnnotateOptions(Settings):
    """``lunar annotate ROOT``: the blind sheet's sample."""

    out: Annotated[Path | None, Field(description="Sheet folder (default: ROOT/annotation)."), OUT] = None
    histories: Annotated[int, Field(ge=0, le=MAX_INT, description="Users to sample.")] = 30
    queries: Annotated[int, Field(ge=0, le=MAX_INT, description="Queries to sample.")] = 100
    max_records: Annotated[
        int,
        Field(ge=1, le=MAX_INT, description="Records shown per history (lunar rate shows the LLM the same)."),
    ] = HISTORY_RECORDS
    seed: Annotated[Seed, Field(description="Seed of the sample and the item ids.")] = 0
    timezone: UserZone = None
    force: Force = False
    as_json: AsJson = False


class AgreementOptions(Settings):
    """``lunar agreement SHEET...``: who the LLM raters are, and where the tables go."""

    llm_raters: Annotated[
        tuple[str, ...],
        Field(description="Comma list of LLM raters (names starting llm: always are)."),
        Flag(parse=lambda text: comma_list(text) or (), cli_type=str, metavar="NAMES"),
    ] = ()
    out: Annotated[
        Path | None,
        Field(
            description="Where agreement.json/.csv go (default: the first sheet's folder when recworld wrote "
            "it, else a new 'agreement' folder beside the sheet). A LUNAR run feeds the report."
        ),
        OUT,
    ] = None
    force: Force = False
    as_json: AsJson = False
