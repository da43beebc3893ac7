"""The ``describe+image`` prompt variant: text descriptions plus the latest item's own image.

Paper Table 4 compares a vision-language model given the multimodal questions
as image descriptions only with the same prompt plus the picture of the most
recent history item (LLaVA-1.6 takes one image per prompt). This module adds
that picture to the rendered messages of a measure whose catalogue entry
``uses_images`` (``mm_*``); every other measure is left as rendered, so a
whole suite can be run under this variant. It works on chat messages only, so
:mod:`recworld.lrworld.prompts` calls it and it never needs the prompt types.

Image paths come from the suite's own dataset copy (``SUITE/dataset``), where
``image`` holds local paths. :func:`suite_images` maps item ids to them, and
checks each image it hands out: inside ``SUITE/dataset`` or an image root given
on the command line (never one the suite's manifest names), and a real image
under the size caps
(:func:`recworld.data.image_refs.check_image`). A dataset can name any path;
only such images are ever attached to a prompt.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Mapping
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path

from recworld.capped import is_remote
from recworld.chat import Message
from recworld.data.dataset import Dataset
from recworld.data.image_refs import ImageRoots, check_image, local_references
from recworld.errors import ConfigError, DataError
from recworld.lrworld.catalogue import get_measure
from recworld.lrworld.manifest import read_manifest
from recworld.lrworld.schema import PublicQuestion

VARIANT = "describe+image"


class CheckedImages(Mapping[str, str]):
    """Item id -> local image path, each checked (roots, signature, size, Pillow) when first looked up.

    Only the images a prompt attaches are checked, once each; a refused image
    raises :class:`~recworld.data.image_refs.RefusedImageError` naming the file and why.
    """

    def __init__(self, references: Mapping[str, str], roots: ImageRoots, base_dir: Path | None) -> None:
        self._references = dict(references)
        self._roots = roots
        self._base_dir = base_dir
        self._checked: dict[str, str] = {}

    def __getitem__(self, item_id: str) -> str:
        if item_id not in self._checked:
            reference = self._references[item_id]
            image = check_image(reference, self._roots, self._base_dir, item_id=item_id)
            self._checked[item_id] = str(image.path)
        return self._checked[item_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._references)

    def __len__(self) -> int:
        return len(self._references)


def suite_images(suite_dir: Path, roots: ImageRoots | None = None) -> CheckedImages:
    """The local item images of a suite's dataset copy (``SUITE/dataset``), checked on use.

    Images may come from ``SUITE/dataset`` and the folders in ``roots`` (given on
    the command line, ``recworld eval --image-root``). The roots a suite's manifest
    records are never trusted: a suite is shared input, and a crafted one naming
    ``/`` would let any file on the machine be posted to the model server.
    """
    folder = Path(suite_dir) / "dataset"
    read_manifest(suite_dir)  # a suite, checked as every other reader checks it
    roots = ImageRoots.of([folder]) + (roots or ImageRoots())
    references = {
        item_id: reference
        for item_id, reference in local_references(Dataset.load(folder))
        if reference is not None and not is_remote(reference)
    }
    return CheckedImages(references, roots, folder)


@cache
def _note() -> string.Template:
    text = resources.files("recworld.lrworld.templates").joinpath("attached_image.txt")
    return string.Template(text.read_text(encoding="utf-8").strip())


def attach_last_image(
    messages: tuple[Message, ...], question: PublicQuestion, images: Mapping[str, str] | None
) -> tuple[Message, ...]:
    """``messages`` with the last history item's image on the final one (measures that use images).

    A sentence saying which history item the picture shows goes before the
    prompt's closing paragraph (the answer instruction), so the reply format
    stays the last thing the model reads.
    """
    if not get_measure(question.measure).uses_images or not question.history:
        return messages
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
    *earlier, message = messages
    head, sep, tail = message.content.rpartition("\n\n")
    content = f"{head}\n\n{note}\n\n{tail}" if sep else f"{message.content}\n\n{note}"
    return (*earlier, replace(message, content=content, images=(*message.images, path)))
