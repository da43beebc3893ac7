"""Multimodal knowledge: describe item images with a vision model (the describe+image variant: lrworld).

Every name here loads its module on first use (module ``__getattr__``, the lazy-attribute
pattern of Scientific Python's SPEC 1), so a command module that imports one submodule
does not pay for the rest at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recworld.lazy import attach

if TYPE_CHECKING:
    from recworld.multimodal.describe import (
        DescribeReport,
        DescribeResult,
        ImageKind,
        describe_dataset,
        run_describe,
        with_descriptions,
    )
    from recworld.multimodal.job import DescribeConfig, DescribeJob

# Public names that load their module (and its heavy imports) when first asked for.
_ON_FIRST_USE = {
    "DescribeReport": "recworld.multimodal.describe",
    "DescribeResult": "recworld.multimodal.describe",
    "ImageKind": "recworld.multimodal.describe",
    "describe_dataset": "recworld.multimodal.describe",
    "run_describe": "recworld.multimodal.describe",
    "with_descriptions": "recworld.multimodal.describe",
    "DescribeConfig": "recworld.multimodal.job",
    "DescribeJob": "recworld.multimodal.job",
}


__getattr__, __dir__ = attach(__name__, _ON_FIRST_USE)


__all__ = [
    "DescribeConfig",
    "DescribeJob",
    "DescribeReport",
    "DescribeResult",
    "ImageKind",
    "describe_dataset",
    "run_describe",
    "with_descriptions",
]
