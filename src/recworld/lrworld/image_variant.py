"""The ``describe+image`` prompt variant: text descriptions plus the latest item's own image.

Paper Table 4 compares a vision-language model given the multimodal questions
as image descriptions only with the same prompt plus the picture of the most
recent history item (LLaVA-1.6 takes one image per prompt). This module adds
that picture to an already rendered ``mm_*`` prompt; every other measure is
left as rendered, so a whole suite can be run under this variant.

Image paths come from the suite's own dataset copy (``SUITE/dataset``), where
``image`` holds local paths; :func:`suite_images` maps item ids to them once
per run.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from recworld.errors import ConfigError, DataError
from recworld.multimodal.images import is_remote, resolve_local

if TYPE_CHECKING:
    from recworld.data.dataset import Dataset
    from recworld.lrworld.prompts import RenderedPrompt
    from recworld.lrworld.schema import Question

VARIANT = "describe+image"
IMAGE_MEASURES = frozenset({"mm_poster", "mm_image"})


def item_images(dataset: Dataset, base_dir: Path | None = None) -> dict[str, str]:
    """Absolute local image path by item id (URL-only and missing images left out)."""
    if "image" not in dataset.items.columns:
        return {}
    out: dict[str, str] = {}
    for item_id, value in zip(dataset.items["item_id"], dataset.items["image"], strict=True):
        if value is None or (isinstance(value, float) and pd.isna(value)):
            continue
        reference = str(value).strip()
        if reference and not is_remote(reference):
            out[str(item_id)] = str(resolve_local(reference, base_dir))
    return out


def suite_images(suite_dir: Path) -> dict[str, str]:
    """The local item images of the dataset a suite was built from (``SUITE/dataset``)."""
    from recworld.data.dataset import Dataset

    folder = Path(suite_dir) / "dataset"
    return item_images(Dataset.load(folder), folder)


@cache
def _note() -> string.Template:
    text = resources.files("recworld.multimodal.instructions").joinpath("attached_image.txt")
    return string.Template(text.read_text(encoding="utf-8").strip())


def attach_last_image(
    prompt: RenderedPrompt, question: Question, images: Mapping[str, str] | None
) -> RenderedPrompt:
    """``prompt`` with the last history item's image on its final user message (``mm_*`` only).

    A sentence saying which history item the picture shows goes before the
    prompt's closing paragraph (the answer instruction), so the reply format
    stays the last thing the model reads.
    """
    if question.measure not in IMAGE_MEASURES or not question.history:
        return prompt
    if images is None:
        raise ConfigError(
            f"prompt variant {VARIANT!r} needs the item images: "
            "render_prompt(..., images=suite_images(suite))"
        )
    last = question.history[-1]
    path = images.get(last.id)
    if path is None:
        raise DataError(
            f"question {question.id}: item {last.id!r}, the last in the history, has no local image",
            field="image",
        )
    noun = "poster" if question.domain == "movie" else "product image"
    note = _note().substitute(image_noun=noun, position=len(question.history))
    *earlier, message = prompt.messages
    head, sep, tail = message.content.rpartition("\n\n")
    content = f"{head}\n\n{note}\n\n{tail}" if sep else f"{message.content}\n\n{note}"
    updated = replace(message, content=content, images=(*message.images, path))
    return replace(prompt, messages=(*earlier, updated))
