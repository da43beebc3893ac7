"""One way to turn messages and choices into tokens, and loglik scores into an answer.

hf, hf-vision and vLLM all hold a Hugging Face tokenizer; llama.cpp has its
own. Whatever the engine, a question must get the same prompt tokens in both
answer modes and the same scored continuation per choice, or loglik and
generate answers (and different engines) stop being comparable. So the rules
live here once:

* a tokenizer with a chat template renders the turns with it and adds no
  special tokens of its own (the template writes BOS where it wants one);
* a base model gets the flattened completion prompt
  (:func:`~recworld.models._common.flatten_messages`) with the tokenizer's
  special tokens, and each choice is scored as ``" " + choice``;
* a choice that tokenises to nothing cannot be scored and is a sample error;
* rank mode scores each option's text the same way as a loglik label, then
  divides by its token count (:func:`mean_per_token`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from recworld.chat import Message, Request, Response, Usage
from recworld.errors import ModelError
from recworld.models._common import best_choice, completion_choice, file_fingerprint, flatten_messages


class TokenSource(Protocol):
    """What loglik scoring needs from a backend: prompt tokens and one choice's tokens."""

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]: ...

    def choice_tokens(self, choice: str) -> list[int]: ...


Scorer = Callable[[Sequence[int], Sequence[Sequence[int]]], list[float]]


class ChatTokens:
    """Prompt and choice tokens from a Hugging Face tokenizer (hf, hf-vision, vLLM)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.is_chat = bool(getattr(tokenizer, "chat_template", None))

    def prompt_text(self, messages: Sequence[Message]) -> str:
        if self.is_chat:
            chat = [{"role": m.role, "content": m.content} for m in messages]
            text: str = self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            return text
        return flatten_messages(messages)

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        ids = self.tokenizer(self.prompt_text(messages), add_special_tokens=not self.is_chat)["input_ids"]
        return [int(i) for i in ids]

    def choice_tokens(self, choice: str) -> list[int]:
        text = choice if self.is_chat else completion_choice(choice)
        return checked_choice(choice, self.tokenizer(text, add_special_tokens=False)["input_ids"])


def checked_choice(choice: str, ids: Sequence[int]) -> list[int]:
    """``ids`` as ints; an empty tokenisation is a sample error naming the choice."""
    tokens = [int(i) for i in ids]
    if not tokens:
        raise ModelError(f"choice {choice!r} tokenises to nothing; it cannot be scored")
    return tokens


def loglik_response(
    request: Request,
    tokens: TokenSource,
    score: Scorer,
    check: Callable[[Sequence[int], Sequence[Sequence[int]]], None] | None = None,
) -> Response:
    """Score every choice after the prompt and answer with the best (ties: the earliest)."""
    if not request.choices:
        raise ModelError("a loglik request needs choices")
    prefix = tokens.prompt_tokens(request.messages)
    if not prefix:
        raise ModelError("cannot score choices after an empty prompt")
    options = [tokens.choice_tokens(c) for c in request.choices]
    if check is not None:
        check(prefix, options)
    scores = score(prefix, options)
    return Response(
        text=best_choice(request.choices, scores),
        choice_logprobs=tuple(scores),
        usage=Usage(len(prefix) + sum(len(o) for o in options), 0),
    )


def mean_per_token(score: Scorer) -> Scorer:
    """Rank mode's scorer: ``score``'s sums divided by each option's token count.

    Rank mode scores whole option texts (titles of different lengths); an
    unnormalised sum would favour the shortest title whatever the model prefers.
    """

    def normalised(prefix: Sequence[int], options: Sequence[Sequence[int]]) -> list[float]:
        sums = score(prefix, options)
        return [total / len(option) for total, option in zip(sums, options, strict=True)]

    return normalised


def sampling_seed(request: Request, fallback: int) -> int:
    """The request's seed; ``fallback`` (ModelConfig.seed) only for a request that carries none."""
    seed = getattr(request, "seed", None)
    return fallback if seed is None else int(seed)


def until_eos(row: Sequence[int], eos: int | None, pad: int | None) -> list[int]:
    """Generated tokens up to (not including) the first EOS; padding after it is dropped."""
    stops = {t for t in (eos, pad) if t is not None}
    for i, token in enumerate(row):
        if token in stops:
            return list(row[:i])
    return list(row)


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """``text`` up to the earliest stop string (engines without native stop strings)."""
    cut = len(text)
    for s in stop:
        at = text.find(s)
        if s and at != -1:
            cut = min(cut, at)
    return text[:cut]


def local_fingerprint(path: Path) -> str:
    """Names a local checkpoint by content: its config plus the start of each weight file."""
    digest = hashlib.sha256()
    for name in sorted(p.name for p in path.iterdir()):
        if name == "config.json" or name.endswith((".safetensors", ".bin")):
            digest.update(name.encode())
            digest.update(file_fingerprint(path / name).encode())
    return digest.hexdigest()
