"""``vllm:<model>``: offline batched inference with vLLM on a GPU machine.

An optional extra (``pip install 'recworld[vllm]'``); vLLM is imported only
when the backend is created. Concurrent generate requests are gathered by a
:class:`~recworld.models._batching.MicroBatcher` and sent to ``LLM.generate``
as one batch, each with its own sampling parameters (and its own seed, the
request's). Loglik sends ``prompt + choice`` once per choice with
``prompt_logprobs`` and sums the choice tokens' log-probabilities; vLLM's
automatic prefix caching makes the shared prompt cost one evaluation. Rank
mode scores each option's text the same way and divides by its token count
(:func:`~recworld.models._tokens.mean_per_token`). Prompt
and choice tokens come from :class:`~recworld.models._tokens.ChatTokens`, the
same rules as the hf backend.

Options (:class:`~recworld.models.options.VLLMOptions`): ``engine_args`` (a
dict passed to ``vllm.LLM``, e.g. ``{"tensor_parallel_size": 2,
"gpu_memory_utilization": 0.8}``), ``batch_size`` (default 64),
``batch_wait_s`` (default 0.02).

The CPU test suite drives both paths through a fake ``vllm`` module
(``tests/models/test_vllm.py``); the engine itself needs a GPU.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from recworld.chat import AnswerMode, Message, Request, Response, Usage
from recworld.errors import ConfigError, ModelError, require
from recworld.models._batching import MicroBatcher
from recworld.models._tokens import ChatTokens, loglik_response, mean_per_token, sampling_seed
from recworld.models.options import VLLMOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec


def _require_vllm() -> Any:
    return require("vllm", feature="the vllm backend", extra="vllm", package="vllm")


class VLLMModel:
    """A vLLM engine behind the Model protocol."""

    def __init__(self, name: str, config: ModelConfig) -> None:
        options = parse_options(VLLMOptions, config.options, "vllm")
        vllm = _require_vllm()
        self._vllm = vllm
        self._name = name
        self._seed = config.seed
        engine_args = dict(options.engine_args)
        engine_args.setdefault("seed", config.seed)
        engine_args.setdefault("max_model_len", config.n_ctx)
        try:
            self._llm = vllm.LLM(model=name, **engine_args)
        except (OSError, ValueError, RuntimeError) as exc:
            raise ModelError(f"vllm:{name}: cannot start the engine: {exc}") from exc
        self.tokens = ChatTokens(self._llm.get_tokenizer())
        self._identity = {"backend": "vllm", "model": name, "dtype": str(engine_args.get("dtype", "auto"))}
        self._batcher: MicroBatcher[Request, Response] = MicroBatcher(
            self._generate_batch, max_batch=options.batch_size, wait_s=options.batch_wait_s
        )

    @property
    def identity(self) -> Mapping[str, str]:
        return self._identity

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK, AnswerMode.RANK})

    @property
    def batch_sizes(self) -> list[int]:
        """Sizes of the generation batches run so far (for tests and benchmarks)."""
        return self._batcher.batch_sizes

    async def complete(self, request: Request) -> Response:
        if request.mode in (AnswerMode.LOGLIK, AnswerMode.RANK):
            return await asyncio.to_thread(self._loglik_locked, request)
        return await self._batcher.submit(request)

    async def aclose(self) -> None:
        return None

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        return self.tokens.prompt_tokens(messages)

    def sampling(self, request: Request) -> Any:
        """The request's ``SamplingParams``: its temperature, length, stops, seed and JSON schema."""
        args: dict[str, Any] = {
            "temperature": request.temperature,
            "max_tokens": max(1, request.max_tokens),
            "stop": list(request.stop) or None,
            "seed": sampling_seed(request, self._seed),
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
        outputs = self._llm.generate(prompts, [self.sampling(r) for r in requests], use_tqdm=False)
        return [
            Response(
                text=out.outputs[0].text,
                usage=Usage(len(prompt["prompt_token_ids"]), len(out.outputs[0].token_ids)),
            )
            for prompt, out in zip(prompts, outputs, strict=True)
        ]

    def _loglik_locked(self, request: Request) -> Response:
        score = self.score_tokens if request.mode is AnswerMode.LOGLIK else mean_per_token(self.score_tokens)
        with self._batcher.lock:
            return loglik_response(request, self.tokens, score)

    def score_tokens(self, prefix: Sequence[int], options: Sequence[Sequence[int]]) -> list[float]:
        """Sum of log P(option tokens | prefix): one ``prompt_logprobs`` pass per option."""
        params = self._vllm.SamplingParams(max_tokens=1, temperature=0.0, prompt_logprobs=1)
        prompts = [{"prompt_token_ids": [*prefix, *option]} for option in options]
        outputs = self._llm.generate(prompts, params, use_tqdm=False)
        scores = []
        for option, out in zip(options, outputs, strict=True):
            rows = out.prompt_logprobs[len(prefix) :]
            scores.append(float(sum(row[token].logprob for row, token in zip(rows, option, strict=True))))
        return scores


def create(spec: ModelSpec, config: ModelConfig) -> VLLMModel:
    """``vllm:<hub repo or local directory>``."""
    if not spec.name:
        raise ConfigError("model spec 'vllm' needs a name: vllm:<model>")
    return VLLMModel(spec.name, config)
