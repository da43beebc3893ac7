"""``recworld build``'s settings: the :class:`BuildConfig` a suite records, plus where to read and write.

:class:`BuildOptions` is the one declaration of the command: its flags and help are
generated from these fields and from the nested :class:`BuildConfig`
(:mod:`recworld.console.options`), so a default changed in ``BuildConfig`` is the
default ``--help`` shows. Only ``build`` is written into ``manifest.json``; the rest
(dataset, output, printing) is how this one build ran.

``--label-rules`` is the one flag of ``BuildConfig``'s three label-rule fields
(each marked ``NoFlag``): ``KEY=VALUE,...`` is parsed here and validated with the rest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, model_validator

from recworld.console.options import IMAGE_ROOT, OUT, AsJson, Flag, Force, Progress
from recworld.data.options import DatasetName, MetadataFile, SourceFormat
from recworld.errors import ConfigError
from recworld.lrworld.config import LABEL_RULES, BuildConfig
from recworld.records import Settings

__all__ = ["BuildOptions", "label_rules"]


def label_rules(text: Any) -> dict[str, Any]:
    """``memory_margin=0.01,rule_margin=none`` -> ``{"memory_margin": "0.01", "rule_margin": None}``."""
    if isinstance(text, dict):
        return dict(text)
    out: dict[str, Any] = {}
    for part in str(text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in LABEL_RULES:
            raise ConfigError(f"{part.strip()!r} is not KEY=VALUE with a known key")
        out[key.strip()] = None if value.strip().lower() == "none" else value.strip()
    return out


class BuildOptions(Settings):
    """Everything ``recworld build`` takes."""

    dataset: DatasetName
    out: Annotated[
        Path,
        Field(description="Suite directory: new, empty, or a suite (rebuilt atomically; runs/ kept)."),
        OUT,
    ]
    format: SourceFormat = None
    metadata: MetadataFile = None
    build: BuildConfig = Field(default_factory=BuildConfig)
    label_rules: Annotated[
        dict[str, Any],
        Field(
            description="Label support and margins, KEY=VALUE,...: memory_min_support (3), memory_margin "
            "(0.005), rule_margin (0.05, or 'none': no consequent is ever a negative)."
        ),
        Flag(parse=label_rules, cli_type=str, metavar="KEY=VALUE,..."),
    ] = Field(default_factory=dict)
    image_roots: Annotated[
        tuple[Path, ...],
        Field(description="A folder item images may come from besides the dataset's (repeatable)."),
        IMAGE_ROOT,
    ] = ()
    force: Force = False
    progress: Progress = True
    as_json: AsJson = False

    @model_validator(mode="before")
    @classmethod
    def _label_rules_into_build(cls, data: Any) -> Any:
        """``--label-rules`` sets ``BuildConfig``'s label-rule fields, validated there."""
        if isinstance(data, dict) and data.get("label_rules"):
            build = data.get("build")
            if isinstance(build, dict) or build is None:
                data = {**data, "build": {**(build or {}), **data["label_rules"]}}
        return data
