"""Multimodal knowledge: describe item images with a vision model (the describe+image variant: lrworld)."""

from recworld.multimodal.describe import (
    DescribeReport,
    DescribeResult,
    ImageKind,
    describe_dataset,
    run_describe,
    with_descriptions,
)
from recworld.multimodal.job import DescribeConfig, DescribeJob

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
