"""Image descriptions describe the image: the default instructions never transcribe printed words."""

from __future__ import annotations

import pytest

from recworld.multimodal.describe import ImageKind, instruction, setup_key
from recworld.multimodal.job import DescribeConfig


@pytest.mark.parametrize("kind", list(ImageKind))
def test_paper_instructions_forbid_copying_printed_text(kind: ImageKind) -> None:
    paper, old = instruction(kind), instruction(kind, "transcribe")
    assert DescribeConfig().instructions == "paper"
    assert "Do not copy" in paper and "copy the title" not in paper and "copy brand names" not in paper
    assert "exactly" in old and ("copy the title" in old or "copy brand names" in old)
    # A journal entry made under one style never answers a run under the other.
    assert setup_key({"model": "m"}, kind, 64) != setup_key({"model": "m"}, kind, 64, "transcribe")
