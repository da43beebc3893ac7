"""transformers backend on a tiny random Llama built offline: determinism, loglik, batching."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recworld.models import AnswerMode, Message, ModelConfig, Request, load_model

pytest.importorskip("transformers")

PROMPTS = [
    "which genre fits the movie",
    "the user watched toy story",
    "A B C",
    "comedy drama horror",
    "answer",
]
CHOICES = ("A", "B", "comedy drama", "toy story then heat")


def load(path: Path, **extra: Any) -> Any:
    return load_model(f"hf:{path}", ModelConfig(options={"device": "cpu", **extra}))


def brute_force(model: Any, prefix: list[int], option: list[int]) -> float:
    """One full forward pass over prefix + option, no cache."""
    import torch

    with torch.inference_mode():
        logits = model._model(input_ids=torch.tensor([prefix + option])).logits[0].double()
    rows = torch.log_softmax(logits, dim=-1)
    return float(sum(rows[len(prefix) - 1 + j, t] for j, t in enumerate(option)))


@pytest.mark.parametrize("which", ["tiny_hf_chat", "tiny_hf_base"])
def test_loglik_matches_full_sequence_computation(which: str, request: pytest.FixtureRequest) -> None:
    model = load(request.getfixturevalue(which))
    messages = (Message("system", "you are a helpful assistant"), Message("user", PROMPTS[0]))
    response = asyncio.run(model.complete(Request(messages, mode=AnswerMode.LOGLIK, choices=CHOICES)))
    prefix = model.prompt_tokens(messages)
    expected = [brute_force(model, prefix, model.choice_tokens(c)) for c in CHOICES]
    assert any(len(model.choice_tokens(c)) > 1 for c in CHOICES)
    np.testing.assert_allclose(response.choice_logprobs, expected, atol=1e-4)
    assert response.text == CHOICES[int(np.argmax(expected))]


def test_chat_template_is_used_when_present(tiny_hf_chat: Path, tiny_hf_base: Path) -> None:
    messages = (Message("user", "A B C"),)
    assert load(tiny_hf_chat).prompt_text(messages).startswith("<|user|> A B C <|end|>")
    assert load(tiny_hf_base).prompt_text(messages) == "A B C\n\nAnswer:"


def test_greedy_generation_is_deterministic_and_batching_changes_nothing(tiny_hf_chat: Path) -> None:
    model = load(tiny_hf_chat, batch_size=8, batch_wait_s=0.05)
    requests = [Request((Message("user", p),), max_tokens=6) for p in PROMPTS]
    one_by_one = [asyncio.run(model.complete(r)).text for r in requests]
    assert [asyncio.run(model.complete(r)).text for r in requests] == one_by_one
    assert set(model.batch_sizes) == {1}

    async def together() -> list[str]:
        return [r.text for r in await asyncio.gather(*(model.complete(r) for r in requests))]

    assert asyncio.run(together()) == one_by_one
    assert max(model.batch_sizes) == len(PROMPTS)  # they really ran as one batch
    fresh = load(tiny_hf_chat)
    assert [asyncio.run(fresh.complete(r)).text for r in requests] == one_by_one


def test_mixed_settings_split_into_groups_and_stop_strings_cut(tiny_hf_chat: Path) -> None:
    model = load(tiny_hf_chat)
    short = Request((Message("user", PROMPTS[1]),), max_tokens=2)
    long = Request((Message("user", PROMPTS[1]),), max_tokens=6)

    async def both() -> list[Any]:
        return list(await asyncio.gather(model.complete(short), model.complete(long)))

    a, b = asyncio.run(both())
    assert a.usage.completion_tokens <= 2 and b.usage.completion_tokens <= 6
    assert b.text.startswith(a.text.strip().split(" ")[0])
    words = b.text.split()
    if len(words) > 1:
        stop = " " + words[1]
        cut = asyncio.run(model.complete(Request(long.messages, max_tokens=6, stop=(stop,))))
        assert stop not in cut.text and b.text.startswith(cut.text)


def test_identity_hashes_the_local_checkpoint(tiny_hf_chat: Path, tiny_hf_base: Path) -> None:
    a, b = load(tiny_hf_chat).identity, load(tiny_hf_base).identity
    assert a["backend"] == "hf" and a["model"] == tiny_hf_chat.name and "/" not in a["model"]
    assert a["sha256"] != b["sha256"]
    assert load(tiny_hf_chat).identity == a
