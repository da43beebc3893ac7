"""Multimodal knowledge: describe item images with a vision model, and the describe+image prompt variant."""

from recworld.multimodal.describe import (
    DescribeConfig,
    DescribeJob,
    DescribeReport,
    DescribeResult,
    ImageKind,
    describe_dataset,
    instruction,
    plan_images,
    run_describe,
    with_descriptions,
)
from recworld.multimodal.images import ImageFile, is_remote, verify_image
from recworld.multimodal.variant import VARIANT, attach_last_image, item_images, suite_images

__all__ = [
    "VARIANT",
    "DescribeConfig",
    "DescribeJob",
    "DescribeReport",
    "DescribeResult",
    "ImageFile",
    "ImageKind",
    "attach_last_image",
    "describe_dataset",
    "instruction",
    "is_remote",
    "item_images",
    "plan_images",
    "run_describe",
    "suite_images",
    "verify_image",
    "with_descriptions",
]
