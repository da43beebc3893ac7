"""Render a question into chat messages with one template file per (variant, measure).

Templates live in ``recworld/lrworld/templates/<variant>/<measure>.txt`` as
plain text with ``${name}`` placeholders (:class:`string.Template`), so a
prompt can be read and edited without touching code. The placeholders are:

``item`` / ``items``        the domain's noun ("movie" / "movies", "product", "artist")
``consumed`` / ``consume``  the domain's verb ("watched" / "watch", "bought" / "buy", ...)
``target``                  the target item's or user's text
``history``                 the history as numbered lines, oldest first
``history_inline``          the history as one comma-separated line
``options``                 lettered options, one per line ("A. ...")
``options_inline``          lettered options on one line ("A. ...; B. ...")
``labels``                  the option letters as words ("A, B, C or D")

A later variant (few-shot, chain of thought, noisy profile) is one more
:class:`Variant` entry and one more template folder; its transforms hook in
:func:`render_prompt` without changing the question files.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from recworld.errors import ConfigError
from recworld.lrworld.schema import Entry, Question
from recworld.models.base import Message

LETTERS = "ABCDEFGHIJ"


@dataclass(frozen=True)
class RenderedPrompt:
    """The chat messages for one question, with one label and one text per candidate."""

    messages: tuple[Message, ...]
    labels: tuple[str, ...]  # "A".."D" for mcq, "A".."J" for hit@1, in candidate order
    option_texts: tuple[str, ...]


@dataclass(frozen=True)
class Variant:
    """A prompting variant: where its templates live (later: examples, suffixes, profile noise)."""

    name: str
    template_dir: str
    # Attach the last history item's own image to mm_* prompts (recworld.multimodal.variant).
    attach_image: bool = False


_VARIANTS: dict[str, Variant] = {
    "zero-shot": Variant("zero-shot", "zero-shot"),
    "describe+image": Variant("describe+image", "zero-shot", attach_image=True),
}
VARIANTS: tuple[str, ...] = tuple(_VARIANTS)


@dataclass(frozen=True)
class _Vocabulary:
    item: str
    items: str
    consumed: str
    consume: str


_VOCABULARY: dict[str, _Vocabulary] = {
    "movie": _Vocabulary("movie", "movies", "watched", "watch"),
    "product": _Vocabulary("product", "products", "bought", "buy"),
    "music": _Vocabulary("artist", "artists", "listened to", "listen to"),
}


def get_variant(name: str) -> Variant:
    try:
        return _VARIANTS[name]
    except KeyError:
        raise ConfigError(f"unknown prompt variant {name!r}; known: {', '.join(VARIANTS)}") from None


@cache
def load_template(variant: str, measure: str) -> string.Template:
    """The template text for a measure under a variant (read once per process)."""
    folder = resources.files("recworld.lrworld.templates").joinpath(get_variant(variant).template_dir)
    path = folder.joinpath(f"{measure}.txt")
    if not path.is_file():
        raise ConfigError(f"no {variant!r} prompt template for measure {measure!r} ({path})")
    return string.Template(path.read_text(encoding="utf-8"))


def _numbered(entries: list[Entry]) -> str:
    return "\n".join(f"{i}. {e.text}" for i, e in enumerate(entries, start=1))


def _label_words(labels: tuple[str, ...]) -> str:
    return ", ".join(labels[:-1]) + f" or {labels[-1]}" if len(labels) > 1 else labels[0]


def render_prompt(
    question: Question, variant: str = "zero-shot", *, images: Mapping[str, str] | None = None
) -> RenderedPrompt:
    """The prompt a model sees for ``question``: history/target, lettered options, ask for one letter.

    ``images`` (item id -> local image path) is needed by variants that attach images.
    """
    template = load_template(variant, question.measure)
    labels = tuple(LETTERS[: len(question.candidates)])
    texts = tuple(c.text for c in question.candidates)
    vocab = _VOCABULARY.get(question.domain, _VOCABULARY["product"])
    content = template.substitute(
        item=vocab.item,
        items=vocab.items,
        consumed=vocab.consumed,
        consume=vocab.consume,
        target=question.target.text,
        history=_numbered(question.history),
        history_inline=", ".join(e.text for e in question.history),
        options="\n".join(f"{label}. {text}" for label, text in zip(labels, texts, strict=True)),
        options_inline="; ".join(f"{label}. {text}" for label, text in zip(labels, texts, strict=True)),
        labels=_label_words(labels),
    )
    rendered = RenderedPrompt(
        messages=(Message(role="user", content=content.strip()),),
        labels=labels,
        option_texts=texts,
    )
    if not get_variant(variant).attach_image:
        return rendered
    from recworld.multimodal.variant import attach_last_image

    return attach_last_image(rendered, question, images)
