"""The vLLM backend through a fake ``vllm`` module: sampling parameters, batching and loglik sums.

vLLM itself needs a GPU. The fake engine records what it is asked and answers
deterministically; the tokenizer is the real tiny one of ``conftest.py``, so
the prompt tokens are checked against the hf backend's rules.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers.vllm_fakes import fake_logprob, fake_vllm
from recworld.errors import ConfigError, MissingDependencyError
from recworld.models import AnswerMode, Message, ModelConfig, ModelSpec, Request, load_model
from recworld.models._tokens import ChatTokens

MESSAGES = (Message("system", "you are a helpful assistant"), Message("user", "which genre fits the movie"))
CHOICES = ("A", "B", "comedy drama")


def test_spec_parsing() -> None:
    spec = ModelSpec.parse("vllm:Qwen/Qwen2-7B-Instruct")
    assert (spec.backend, spec.name) == ("vllm", "Qwen/Qwen2-7B-Instruct")
    with pytest.raises(ConfigError, match="needs a name"):
        ModelSpec.parse("vllm")


def test_missing_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("vllm") is not None:
        monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(MissingDependencyError, match=re.escape("pip install 'recworld[vllm]'")):
        load_model("vllm:Qwen/Qwen2-7B-Instruct")


def test_generation_batches_requests_each_with_its_own_sampling(
    monkeypatch: pytest.MonkeyPatch, tiny_hf_chat: Path
) -> None:
    fake_vllm(monkeypatch, tiny_hf_chat)
    config = ModelConfig(seed=9, n_ctx=256, options={"batch_size": 8, "engine_args": {"dtype": "half"}})
    model: Any = load_model("vllm:org/model", config)
    assert model._llm.engine_args == {"dtype": "half", "seed": 9, "max_model_len": 256}
    schema = {"type": "object"}
    requests = [
        Request(MESSAGES, seed=1, temperature=0.7, stop=("\n",)),
        Request(MESSAGES, seed=2, json_schema=schema),
        Request((Message("user", "answer"),), seed=3, max_tokens=0),
    ]

    async def all_at_once() -> list[Any]:
        return list(await asyncio.gather(*(model.complete(r) for r in requests)))

    responses = asyncio.run(all_at_once())
    assert [r.text for r in responses] == ["seed=1", "seed=2", "seed=3"]
    assert model.batch_sizes == [3]
    prompts, params = model._llm.calls[0]
    tokens = ChatTokens(model._llm.tokenizer)
    assert prompts[0]["prompt_token_ids"] == tokens.prompt_tokens(MESSAGES)
    assert params[0].kwargs == {"temperature": 0.7, "max_tokens": 256, "stop": ["\n"], "seed": 1}
    assert params[1].kwargs["structured_outputs"].json == schema and params[1].kwargs["stop"] is None
    assert params[2].kwargs["max_tokens"] == 1  # max_tokens=0 is sent as 1
    assert responses[0].usage.completion_tokens == 2


def test_old_vllm_gets_guided_decoding(monkeypatch: pytest.MonkeyPatch, tiny_hf_chat: Path) -> None:
    fake_vllm(monkeypatch, tiny_hf_chat, structured=False)
    model: Any = load_model("vllm:org/model")
    params = model.sampling(Request(MESSAGES, json_schema={"type": "object"}))
    assert "guided_decoding" in params.kwargs and "structured_outputs" not in params.kwargs


@pytest.mark.parametrize("which", ["tiny_hf_chat", "tiny_hf_base"])
def test_loglik_sums_each_choice_after_the_shared_prompt(
    monkeypatch: pytest.MonkeyPatch, which: str, request: pytest.FixtureRequest
) -> None:
    directory: Path = request.getfixturevalue(which)
    fake_vllm(monkeypatch, directory)
    model: Any = load_model("vllm:org/model")
    response = asyncio.run(model.complete(Request(MESSAGES, mode=AnswerMode.LOGLIK, choices=CHOICES)))
    tok = model._llm.tokenizer
    chat = which == "tiny_hf_chat"
    prefix = model.prompt_tokens(MESSAGES)
    expected = []
    for choice in CHOICES:
        option = tok(choice if chat else " " + choice, add_special_tokens=False)["input_ids"]
        expected.append(sum(fake_logprob(len(prefix) + j, t) for j, t in enumerate(option)))
    assert response.choice_logprobs == pytest.approx(expected)
    assert response.text == CHOICES[expected.index(max(expected))]
    prompts, params = model._llm.calls[0]
    assert len(prompts) == len(CHOICES) and all(
        p["prompt_token_ids"][: len(prefix)] == prefix for p in prompts
    )
    assert params.kwargs == {"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1}
    # The prompt counts once (prefix caching), then each choice's tokens.
    assert response.usage.prompt_tokens == sum(
        len(p["prompt_token_ids"]) - len(prefix) for p in prompts
    ) + len(prefix)


def test_images_go_to_chat_with_every_sampling_field(
    monkeypatch: pytest.MonkeyPatch, tiny_hf_chat: Path
) -> None:
    fake_vllm(monkeypatch, tiny_hf_chat)
    model: Any = load_model("vllm:org/vlm", ModelConfig(options={"batch_size": 8}))
    poster = tiny_hf_chat / "poster.png"
    poster.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    pictured = Request(
        (Message("user", "describe", images=(str(poster),)),),
        seed=4,
        temperature=0.3,
        stop=("\n",),
        max_tokens=9,
    )

    async def together() -> list[Any]:
        return list(await asyncio.gather(model.complete(Request(MESSAGES, seed=5)), model.complete(pictured)))

    text, image = asyncio.run(together())
    assert (text.text, image.text) == ("seed=5", "images=1 seed=4")
    assert model.batch_sizes == [2]  # one batch, split between generate and chat
    (conversation,), params = model._llm.chats[0]
    parts = conversation[0]["content"]
    assert parts[0] == {"type": "text", "text": "describe"}
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert params[0].kwargs == {"temperature": 0.3, "max_tokens": 9, "stop": ["\n"], "seed": 4}
    assert len(model._llm.calls[0][0]) == 1  # only the text request went to generate


def test_loglik_with_images_and_unreadable_images_fail_only_that_request(
    monkeypatch: pytest.MonkeyPatch, tiny_hf_chat: Path
) -> None:
    from recworld.errors import ModelError

    fake_vllm(monkeypatch, tiny_hf_chat)
    model: Any = load_model("vllm:org/vlm")
    pictured = (Message("user", "which", images=("data:image/png;base64,AAAA",)),)
    with pytest.raises(ModelError, match="text only"):
        asyncio.run(model.complete(Request(pictured, mode=AnswerMode.LOGLIK, choices=("A", "B"))))
    with pytest.raises(ModelError, match="cannot read image"):
        asyncio.run(model.complete(Request((Message("user", "x", images=("/no/such.png",)),))))
    assert model.context_window == 4096 and model.count_tokens("which genre") == 2
