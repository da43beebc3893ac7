"""Rank mode on hf, vLLM and openai: each option's text scored as a continuation, per token.

hf runs the tiny random Llama of ``conftest.py`` and is checked against one
full forward pass per option; vLLM runs through the fake ``vllm`` module of
``test_vllm.py``; openai runs against fake completions servers (both
transports) that echo per-token prompt logprobs with text offsets.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers.openai_fakes import TOKEN, echo_handler, fake_server_model, httpx, token_logprob
from helpers.vllm_fakes import fake_logprob, fake_vllm
from recworld.errors import ConfigError, ModelError
from recworld.models import AnswerMode, Message, ModelConfig, Request, load_model
from recworld.models._common import flatten_messages
from recworld.models.openai_compat import OpenAICompatModel, span_logprob

MESSAGES = (Message("system", "you are a helpful assistant"), Message("user", "which genre fits the movie"))
# Option texts of different token lengths: normalisation must change the order a plain sum gives.
OPTIONS = ("comedy", "comedy drama horror animation", "toy story then heat")


def rank(model: Any, options: tuple[str, ...] = OPTIONS) -> Any:
    return asyncio.run(model.complete(Request(MESSAGES, mode=AnswerMode.RANK, choices=options)))


# -- hf ---------------------------------------------------------------------------------------


def full_pass_mean(model: Any, prefix: list[int], option: list[int]) -> float:
    """Mean log P(option token | everything before it), from one uncached forward pass."""
    import torch

    with torch.inference_mode():
        logits = model._model(input_ids=torch.tensor([prefix + option])).logits[0].double()
    rows = torch.log_softmax(logits, dim=-1)
    return float(sum(rows[len(prefix) - 1 + j, t] for j, t in enumerate(option))) / len(option)


@pytest.mark.parametrize("which", ["tiny_hf_chat", "tiny_hf_base"])
def test_hf_rank_is_the_mean_logprob_per_option_token(which: str, request: pytest.FixtureRequest) -> None:
    pytest.importorskip("transformers")
    model: Any = load_model(f"hf:{request.getfixturevalue(which)}", ModelConfig(options={"device": "cpu"}))
    assert AnswerMode.RANK in model.supports
    response = rank(model)
    prefix = model.prompt_tokens(MESSAGES)
    options = [model.choice_tokens(o) for o in OPTIONS]
    assert len({len(o) for o in options}) > 1  # lengths differ, so normalising matters
    expected = [full_pass_mean(model, prefix, o) for o in options]
    assert len(response.choice_logprobs) == len(OPTIONS)
    assert all(math.isfinite(s) for s in response.choice_logprobs)
    np.testing.assert_allclose(response.choice_logprobs, expected, atol=1e-4)
    assert response.text == OPTIONS[int(np.argmax(expected))]
    # Loglik on the same texts gives the plain sums: rank is exactly those divided by token counts.
    loglik = asyncio.run(model.complete(Request(MESSAGES, mode=AnswerMode.LOGLIK, choices=OPTIONS)))
    sums = np.array(loglik.choice_logprobs)
    np.testing.assert_allclose(response.choice_logprobs, sums / [len(o) for o in options], atol=1e-9)


# -- vLLM -------------------------------------------------------------------------------------


def test_vllm_rank_divides_each_sum_by_the_option_length(
    monkeypatch: pytest.MonkeyPatch, tiny_hf_chat: Path
) -> None:
    fake_vllm(monkeypatch, tiny_hf_chat)
    model: Any = load_model("vllm:org/model")
    assert AnswerMode.RANK in model.supports
    response = rank(model)
    tok = model._llm.tokenizer
    prefix = model.prompt_tokens(MESSAGES)
    expected = []
    for text in OPTIONS:
        option = tok(text, add_special_tokens=False)["input_ids"]
        expected.append(sum(fake_logprob(len(prefix) + j, t) for j, t in enumerate(option)) / len(option))
    assert response.choice_logprobs == pytest.approx(expected)
    assert response.text == OPTIONS[expected.index(max(expected))]
    prompts, params = model._llm.calls[0]
    assert [p["prompt_token_ids"][: len(prefix)] for p in prompts] == [prefix] * len(OPTIONS)
    assert params.kwargs["prompt_logprobs"] == 1


# -- openai -----------------------------------------------------------------------------------


@pytest.fixture(params=["sdk", "aiohttp"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


LOCAL = ModelConfig(base_url="http://127.0.0.1:9/v1")


def test_openai_rank_scores_each_option_from_echoed_prompt_logprobs(transport: str) -> None:
    seen: list[Any] = []
    model = fake_server_model(LOCAL, echo_handler, seen=seen, transport=transport)
    assert AnswerMode.RANK in model.supports
    response = rank(model)
    expected = []
    for option in OPTIONS:
        words = option.split()
        expected.append(sum(token_logprob(w) for w in words) / len(words))
    assert response.choice_logprobs == pytest.approx(expected)
    assert response.text == OPTIONS[expected.index(max(expected))]
    assert [s.url.path for s in seen] == ["/v1/completions"] * len(OPTIONS)
    bodies = [json.loads(s.content) for s in seen]
    prompt = flatten_messages(MESSAGES)
    assert sorted(b["prompt"] for b in bodies) == sorted(f"{prompt} {o}" for o in OPTIONS)
    assert all(b["echo"] is True and b["logprobs"] == 1 and b["max_tokens"] == 1 for b in bodies)
    assert response.usage.prompt_tokens == sum(len(TOKEN.findall(b["prompt"])) for b in bodies)


def test_openai_rank_without_echo_says_it_needs_prompt_logprobs(transport: str) -> None:
    def no_echo(request: Any) -> Any:
        choice = {"index": 0, "text": " x", "finish_reason": "length"}
        choice["logprobs"] = {"tokens": [" x"], "text_offset": [0], "token_logprobs": [-0.1]}
        return httpx.Response(200, json={"choices": [choice]})

    model = fake_server_model(LOCAL, no_echo, transport=transport)
    with pytest.raises(ModelError, match="rank mode needs prompt logprobs"):
        rank(model)


def test_openai_rank_refused_echo_is_a_sample_error_naming_the_need(transport: str) -> None:
    def refuse(request: Any) -> Any:
        return httpx.Response(400, json={"error": {"message": "echo is not supported"}})

    model = fake_server_model(LOCAL, refuse, transport=transport)
    with pytest.raises(ModelError, match=r"echo is not supported.*rank mode needs prompt logprobs"):
        rank(model)


def test_openai_rank_is_declared_only_with_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = OpenAICompatModel("gpt-4o-mini", ModelConfig())
    assert AnswerMode.RANK not in model.supports
    assert AnswerMode.LOGLIK in model.supports
    with pytest.raises(ConfigError, match="rank mode needs prompt logprobs"):
        rank(model)


def test_span_takes_a_token_straddling_the_prompt_end_and_leaves_the_generated_one() -> None:
    text = "Answer: comedy"
    start = len("Answer:")
    choice = {
        "text": text + "!",
        # "Answer" | ": com" straddles the boundary | "edy" | "!" generated
        "logprobs": {"text_offset": [0, 6, 11, 14], "token_logprobs": [None, -1.0, -2.0, -9.0]},
    }
    assert span_logprob(choice, start, text) == (-3.0, 2)
    aligned = {
        "text": text + "!",
        "logprobs": {"text_offset": [0, 7, 14], "token_logprobs": [None, -0.5, -9.0]},
    }
    assert span_logprob(aligned, start, text) == (-0.5, 1)
    with pytest.raises(ModelError, match="no prompt logprobs"):
        span_logprob({"text": text}, start, text)
