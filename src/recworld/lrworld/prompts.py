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
``names_inline``            the options' names on one line, comma-separated, no letters: what
                            LLaRA's code puts in ``[CansHere]`` (paper Table 24); a template that
                            uses it is answered by name (:func:`read_name_reply`), not by letter
``labels``                  the option letters as words ("A, B, C or D")

Variants reuse the zero-shot templates and change what is around them:
``cot`` appends the paper's trigger "Let's think step by step." to the
zero-shot prompt, as the paper does (§5.4: "we append ... to the zero-shot
prompt"; the answer is read from the last answer statement);
``few-shot-K`` puts K solved questions before the question as earlier chat
turns (which ones is the evaluation's business: :mod:`recworld.evaluation.variants`);
``noisy`` asks a question whose history the evaluation has corrupted. In rank
mode (``rank=True``) the options are listed without letters and the model is
asked for the option itself, so that each option's text can be scored as the
continuation.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Literal

from recworld.chat import Message
from recworld.errors import ConfigError
from recworld.lrworld.image_variant import attach_last_image
from recworld.lrworld.schema import Entry, PublicQuestion, Question

LETTERS = "ABCDEFGHIJKLMNOPQRST"  # up to 20 options (LastFM, as LLaRA)
# The paper's chain-of-thought trigger (Kojima et al. 2022), appended to the zero-shot prompt unchanged.
COT_SUFFIX = "Let's think step by step."
RANK_SUFFIX = "Reply with the chosen option, copied exactly."
_REPLY_LINE = "Reply with a single letter"
_ANSWER_CUE = re.compile(r"answer\s*(?:is)?\s*[:：]", re.IGNORECASE)


@dataclass(frozen=True)
class RenderedPrompt:
    """The chat messages for one question, with one label and one text per candidate."""

    messages: tuple[Message, ...]
    labels: tuple[str, ...]  # "A".."D" for mcq, "A".."J" for hit@1, in candidate order
    option_texts: tuple[str, ...]
    # How the reply names its choice: by letter (extract_choice), or by the option's name
    # (LLaRA's matcher, :func:`read_name_reply`) when the prompt lists names without letters.
    answer_by: Literal["letter", "name"] = "letter"


@dataclass(frozen=True)
class Variant:
    """A prompting variant: its templates, and what it changes around them."""

    name: str
    template_dir: str
    # Attach the last history item's own image to measures that `uses_images` (lrworld.image_variant).
    attach_image: bool = False
    chain_of_thought: bool = False
    shots: int = 0  # solved examples before the question
    noisy: bool = False  # one history item replaced by an item the user never had

    @property
    def default_max_tokens(self) -> int:
        """Room for the reply: a letter, or reasoning and then a letter."""
        return 512 if self.chain_of_thought else 16


MAX_SHOTS = 5
_VARIANTS: dict[str, Variant] = {
    "zero-shot": Variant("zero-shot", "zero-shot"),
    "describe+image": Variant("describe+image", "zero-shot", attach_image=True),
    "cot": Variant("cot", "zero-shot", chain_of_thought=True),
    "noisy": Variant("noisy", "zero-shot", noisy=True),
    **{f"few-shot-{k}": Variant(f"few-shot-{k}", "zero-shot", shots=k) for k in range(1, MAX_SHOTS + 1)},
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
        from recworld.console import suggestion

        hint = suggestion(name, VARIANTS)
        raise ConfigError(f"unknown prompt variant {name!r}{hint}; known: {', '.join(VARIANTS)}") from None


@cache
def load_template(variant: str, measure: str) -> string.Template:
    """The template text for a measure under a variant (read once per process)."""
    folder = resources.files("recworld.lrworld.templates").joinpath(get_variant(variant).template_dir)
    path = folder.joinpath(f"{measure}.txt")
    if not path.is_file():
        raise ConfigError(f"no {variant!r} prompt template for measure {measure!r} ({path})")
    return string.Template(path.read_text(encoding="utf-8"))


def _numbered(entries: Sequence[Entry]) -> str:
    return "\n".join(f"{i}. {e.text}" for i, e in enumerate(entries, start=1))


def _label_words(labels: tuple[str, ...]) -> str:
    return ", ".join(labels[:-1]) + f" or {labels[-1]}" if len(labels) > 1 else labels[0]


def answered_by_name(question: Question | PublicQuestion, variant: str = "zero-shot") -> bool:
    """True when the measure's template lists the options by name (``${names_inline}``)."""
    return "names_inline" in load_template(variant, question.measure).get_identifiers()


def read_name_reply(text: str, names: Sequence[str]) -> int | None:
    """The option a reply names, as LLaRA's evaluation code reads it; None for a miss.

    LLaRA (``calculate_hr1``) lower-cases the first line of the reply and the
    candidate names, and counts the reply valid only when exactly one name
    occurs in it (as a substring, so "Artist 12" also contains "Artist 1").
    Two additions: a line that *is* one name (after trimming quotes and a
    final full stop) counts as that name even when a shorter name occurs in
    it, which LLaRA's rule would call no answer; and when the reply states
    "Answer: ..." (the chain-of-thought variant asks for it), the text after
    the last such cue is read instead of the first line.
    """
    body = text.strip()
    cues = list(_ANSWER_CUE.finditer(body))
    line = body[cues[-1].end() :] if cues else body
    line = line.strip().split("\n")[0].strip().lower()
    folded = [name.strip().lower() for name in names]
    exact = [i for i, name in enumerate(folded) if name and name == line.strip(" \"'*.")]
    if len(exact) == 1:
        return exact[0]
    found = [i for i, name in enumerate(folded) if name and name in line]
    return found[0] if len(found) == 1 else None


def _content(question: PublicQuestion, variant: str, *, rank: bool) -> str:
    """One question's user turn under ``variant``."""
    template = load_template(variant, question.measure)
    labels = tuple(LETTERS[: len(question.candidates)])
    texts = tuple(c.text for c in question.candidates)
    vocab = _VOCABULARY.get(question.domain, _VOCABULARY["product"])
    if rank:
        options = "\n".join(f"- {text}" for text in texts)
        inline = "; ".join(texts)
    else:
        options = "\n".join(f"{label}. {text}" for label, text in zip(labels, texts, strict=True))
        inline = "; ".join(f"{label}. {text}" for label, text in zip(labels, texts, strict=True))
    content = template.substitute(
        item=vocab.item,
        items=vocab.items,
        consumed=vocab.consumed,
        consume=vocab.consume,
        target=question.target.text,
        history=_numbered(question.history),
        history_inline=", ".join(e.text for e in question.history),
        options=options,
        options_inline=inline,
        names_inline=", ".join(texts),
        labels=_label_words(labels),
    ).strip()
    if rank:
        return _replace_reply_line(content, RANK_SUFFIX)
    if get_variant(variant).chain_of_thought:
        return f"{content}\n\n{COT_SUFFIX}"
    return content


def _replace_reply_line(content: str, instruction: str) -> str:
    """``content`` with its closing "Reply with a single letter" line replaced (or ``instruction`` added)."""
    lines = content.split("\n")
    kept = [line for line in lines if not line.startswith(_REPLY_LINE)]
    return "\n".join(kept).rstrip() + "\n\n" + instruction


def render_prompt(
    question: Question | PublicQuestion,
    variant: str = "zero-shot",
    *,
    images: Mapping[str, str] | None = None,
    examples: Sequence[Question] = (),
    rank: bool = False,
) -> RenderedPrompt:
    """The prompt a model sees for ``question``: history/target, lettered options, ask for one letter.

    ``images`` (item id -> local image path) is needed by variants that attach images.
    ``examples`` are solved questions shown first, each as a user turn answered by
    its letter (or, with ``rank``, its option text) in an assistant turn.

    The question itself is rendered from its public view only
    (:attr:`Question.public`), so nothing of its own answer or evidence can
    reach the prompt: the messages are the same whichever option is right.
    """
    turns: list[Message] = []
    for example in examples:
        answer = example.answer
        by_name = rank or answered_by_name(example)
        reply = answer.text if by_name else LETTERS[example.answer_index]
        turns.append(Message(role="user", content=_content(example.public, "zero-shot", rank=rank)))
        turns.append(Message(role="assistant", content=reply))
    if isinstance(question, Question):
        question = question.public
    content = _content(question, variant, rank=rank)
    rendered = RenderedPrompt(
        messages=(*turns, Message(role="user", content=content)),
        labels=tuple(LETTERS[: len(question.candidates)]),
        option_texts=tuple(c.text for c in question.candidates),
        answer_by="name" if answered_by_name(question, variant) else "letter",
    )
    if not get_variant(variant).attach_image:
        return rendered
    return replace(rendered, messages=attach_last_image(rendered.messages, question, images))
