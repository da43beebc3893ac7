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
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from recworld.errors import ConfigError, MissingDependencyError
from recworld.models import AnswerMode, Message, ModelConfig, ModelSpec, Request, load_model
from recworld.models._tokens import ChatTokens

MESSAGES = (Message("system", "you are a helpful assistant"), Message("user", "which genre fits the movie"))
CHOICES = ("A", "B", "comedy drama")


def fake_logprob(position: int, token: int) -> float:
    return -0.1 * position - 0.01 * token


@dataclass
class Logprob:
    logprob: float


class SamplingParams:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


class StructuredOutputsParams:
    def __init__(self, json: Any) -> None:
        self.json = json


class FakeLLM:
    tokenizer_dir: Path

    def __init__(self, model: str, **engine_args: Any) -> None:
        from transformers import AutoTokenizer

        self.model, self.engine_args = model, engine_args
        self.tokenizer = AutoTokenizer.from_pretrained(self.tokenizer_dir)
        self.calls: list[tuple[list[dict[str, list[int]]], Any]] = []

    def get_tokenizer(self) -> Any:
        return self.tokenizer

    def generate(self, prompts: list[dict[str, list[int]]], params: Any, use_tqdm: bool = True) -> list[Any]:
        assert use_tqdm is False
        self.calls.append((prompts, params))
        if isinstance(params, list):  # generation: one SamplingParams per prompt
            return [
                types.SimpleNamespace(
                    outputs=[types.SimpleNamespace(text=f"seed={p.kwargs['seed']}", token_ids=[5, 6])]
                )
                for p in params
            ]
        return [  # prompt logprobs: None for the first token, then {token: Logprob} per position
            types.SimpleNamespace(
                prompt_logprobs=[None]
                + [{t: Logprob(fake_logprob(j, t))} for j, t in enumerate(p["prompt_token_ids"]) if j > 0]
            )
            for p in prompts
        ]


def fake_vllm(monkeypatch: pytest.MonkeyPatch, tokenizer_dir: Path, *, structured: bool = True) -> None:
    module = types.ModuleType("vllm")
    FakeLLM.tokenizer_dir = tokenizer_dir
    module.LLM = FakeLLM  # type: ignore[attr-defined]
    module.SamplingParams = SamplingParams  # type: ignore[attr-defined]
    params = types.SimpleNamespace(GuidedDecodingParams=StructuredOutputsParams)
    if structured:
        params.StructuredOutputsParams = StructuredOutputsParams
    module.sampling_params = params  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)


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
