"""A fake ``vllm`` module for the vLLM backend's tests (vLLM itself needs a GPU).

The engine records what it is asked and answers deterministically; the tokenizer
is the real tiny one of ``conftest.py``. :class:`SamplingParams` accepts only the
keyword names real vLLM's ``SamplingParams`` has, so a request field sent under a
name vLLM does not know fails here too.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# vllm.SamplingParams' fields (0.6 to 0.11): structured_outputs replaced guided_decoding in 0.11.
SAMPLING_FIELDS = frozenset(
    {
        "n", "best_of", "presence_penalty", "frequency_penalty", "repetition_penalty", "temperature",
        "top_p", "top_k", "min_p", "seed", "stop", "stop_token_ids", "bad_words", "ignore_eos",
        "max_tokens", "min_tokens", "logprobs", "prompt_logprobs", "detokenize", "skip_special_tokens",
        "spaces_between_special_tokens", "logits_processors", "include_stop_str_in_output",
        "truncate_prompt_tokens", "output_kind", "guided_decoding", "structured_outputs", "logit_bias",
        "allowed_token_ids", "extra_args",
    }
)  # fmt: skip


def fake_logprob(position: int, token: int) -> float:
    return -0.1 * position - 0.01 * token


@dataclass
class Logprob:
    logprob: float


class SamplingParams:
    def __init__(self, **kwargs: Any) -> None:
        unknown = set(kwargs) - SAMPLING_FIELDS
        if unknown:
            raise TypeError(f"SamplingParams got unexpected keyword arguments {sorted(unknown)}")
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
        self.chats: list[tuple[list[list[dict[str, Any]]], Any]] = []

    def get_tokenizer(self) -> Any:
        return self.tokenizer

    def chat(self, messages: list[list[dict[str, Any]]], params: Any, use_tqdm: bool = True) -> list[Any]:
        """vLLM's chat entry (OpenAI-format conversations): it answers with what it was shown."""
        assert use_tqdm is False and isinstance(params, list) and len(params) == len(messages)
        self.chats.append((messages, params))
        out = []
        for conversation, p in zip(messages, params, strict=True):
            parts = [c for m in conversation if isinstance(m["content"], list) for c in m["content"]]
            images = sum(1 for c in parts if c["type"] == "image_url")
            text = f"images={images} seed={p.kwargs['seed']}"
            out.append(
                types.SimpleNamespace(
                    prompt_token_ids=[1, 2, 3], outputs=[types.SimpleNamespace(text=text, token_ids=[5])]
                )
            )
        return out

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
