"""``vllm:<model>``: offline batched inference with vLLM on a GPU machine.

An optional extra (``pip install 'recworld[vllm]'``); vLLM is imported only
when the backend is created. Concurrent generate requests are gathered by a
:class:`~recworld.models._batching.MicroBatcher` and sent to ``LLM.generate``
as one batch, each with its own sampling parameters. Loglik sends
``prompt + choice`` once per choice with ``prompt_logprobs`` and sums the
choice tokens' log-probabilities; vLLM's automatic prefix caching makes the
shared prompt cost one evaluation.

Options in ``ModelConfig.extra``: ``engine_args`` (a dict passed to
``vllm.LLM``, e.g. ``{"tensor_parallel_size": 2, "gpu_memory_utilization": 0.8}``),
``batch_size`` (default 64), ``batch_wait_s`` (default 0.02).

This backend is not exercised by the CPU test suite (vLLM needs a GPU);
only its spec parsing and missing-extra message are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from recworld.errors import ConfigError, ModelError, require
from recworld.models._batching import MicroBatcher
from recworld.models._common import best_choice, completion_choice, flatten_messages
from recworld.models.base import AnswerMode, Message, Request, Response, Usage
from recworld.models.registry import ModelConfig, ModelSpec


def _require_vllm() -> Any:
    return require("vllm", feature="the vllm backend", extra="vllm", package="vllm")


class VLLMModel:
    """A vLLM engine behind the Model protocol."""

    def __init__(self, name: str, config: ModelConfig) -> None:
        vllm = _require_vllm()
        self._vllm = vllm
        self._name = name
        self._seed = config.seed
        engine_args = dict(config.extra.get("engine_args", {}))
        engine_args.setdefault("seed", config.seed)
        engine_args.setdefault("max_model_len", config.n_ctx)
        try:
            self._llm = vllm.LLM(model=name, **engine_args)
        except (OSError, ValueError, RuntimeError) as exc:
            raise ModelError(f"vllm:{name}: cannot start the engine: {exc}") from exc
        self._tokenizer = self._llm.get_tokenizer()
        self._is_chat = bool(getattr(self._tokenizer, "chat_template", None))
        self._identity = {"backend": "vllm", "model": name, "dtype": str(engine_args.get("dtype", "auto"))}
        self._batcher: MicroBatcher[Request, Response] = MicroBatcher(
            self._generate_batch,
            max_batch=int(config.extra.get("batch_size", 64)),
            wait_s=float(config.extra.get("batch_wait_s", 0.02)),
        )

    @property
    def identity(self) -> Mapping[str, str]:
        return self._identity

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK})

    async def complete(self, request: Request) -> Response:
        if request.mode is AnswerMode.LOGLIK:
            return await asyncio.to_thread(self._loglik_locked, request)
        return await self._batcher.submit(request)

    async def aclose(self) -> None:
        return None

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        tok = self._tokenizer
        if self._is_chat:
            chat = [{"role": m.role, "content": m.content} for m in messages]
            text = tok.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            return [int(i) for i in tok(text, add_special_tokens=False)["input_ids"]]
        return [int(i) for i in tok(flatten_messages(messages))["input_ids"]]

    def _sampling(self, request: Request) -> Any:
        args: dict[str, Any] = {
            "temperature": request.temperature,
            "max_tokens": max(1, request.max_tokens),
            "stop": list(request.stop) or None,
            "seed": self._seed,
        }
        if request.json_schema is not None:
            sampling_params = self._vllm.sampling_params
            if hasattr(sampling_params, "StructuredOutputsParams"):
                args["structured_outputs"] = sampling_params.StructuredOutputsParams(
                    json=dict(request.json_schema)
                )
            else:  # vLLM before 0.11
                args["guided_decoding"] = sampling_params.GuidedDecodingParams(json=dict(request.json_schema))
        return self._vllm.SamplingParams(**args)

    def _generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        prompts = [{"prompt_token_ids": self.prompt_tokens(r.messages)} for r in requests]
        outputs = self._llm.generate(prompts, [self._sampling(r) for r in requests], use_tqdm=False)
        return [
            Response(
                text=out.outputs[0].text,
                usage=Usage(len(prompt["prompt_token_ids"]), len(out.outputs[0].token_ids)),
            )
            for prompt, out in zip(prompts, outputs, strict=True)
        ]

    def _loglik_locked(self, request: Request) -> Response:
        with self._batcher.lock:
            return self._loglik(request)

    def _loglik(self, request: Request) -> Response:
        if not request.choices:
            raise ModelError("a loglik request needs choices")
        prefix = self.prompt_tokens(request.messages)
        options = []
        for choice in request.choices:
            text = choice if self._is_chat else completion_choice(choice)
            ids = [int(i) for i in self._tokenizer(text, add_special_tokens=False)["input_ids"]]
            if not ids:
                raise ModelError(f"choice {choice!r} tokenises to nothing; it cannot be scored")
            options.append(ids)
        params = self._vllm.SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=1)
        prompts = [{"prompt_token_ids": prefix + option} for option in options]
        outputs = self._llm.generate(prompts, params, use_tqdm=False)
        scores = []
        for option, out in zip(options, outputs, strict=True):
            rows = out.prompt_logprobs[len(prefix) :]
            scores.append(float(sum(row[token].logprob for row, token in zip(rows, option, strict=True))))
        return Response(
            text=best_choice(request.choices, scores),
            choice_logprobs=tuple(scores),
            usage=Usage(len(prefix) + sum(len(o) for o in options), 0),
        )


def create(spec: ModelSpec, config: ModelConfig) -> VLLMModel:
    """``vllm:<hub repo or local directory>``."""
    if not spec.name:
        raise ConfigError("model spec 'vllm' needs a name: vllm:<model>")
    return VLLMModel(spec.name, config)
