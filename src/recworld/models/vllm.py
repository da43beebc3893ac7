"""``vllm:<model>``: offline batched inference with vLLM on a GPU machine.

An optional extra (``pip install 'recworld[vllm]'``); vLLM is imported only when the
backend is created. Concurrent generate requests are gathered by a
:class:`~recworld.models._batching.MicroBatcher` and sent to ``LLM.generate`` as one
batch, each with its own sampling parameters (and its own seed, the request's). A
request with images goes to ``LLM.chat`` instead, in the OpenAI content-part format
(local images inlined as data URLs), so vLLM's own multimodal processor places them;
loglik and rank score text only. Loglik sends ``prompt + choice`` once per choice with
``prompt_logprobs`` and sums the choice tokens' log-probabilities; vLLM's automatic
prefix caching makes the shared prompt cost one evaluation. Rank mode scores each
option's text the same way and divides by its token count
(:func:`~recworld.models._tokens.mean_per_token`). Prompt and choice tokens come from
:class:`~recworld.models._tokens.ChatTokens`, the same rules as the hf backend.

Options (:class:`~recworld.models.options.VLLMOptions`): ``engine_args`` (a dict passed
to ``vllm.LLM``, e.g. ``{"tensor_parallel_size": 2, "gpu_memory_utilization": 0.8}``),
``batch_size`` (default 64), ``batch_wait_s`` (default 0.02).

The CPU test suite drives both paths through a fake ``vllm`` module
(``tests/models/test_vllm.py``); the engine itself needs a GPU.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from recworld.chat import AnswerMode, Message, Request, Response, Usage
from recworld.errors import ConfigError, ModelError, require
from recworld.models._batching import MicroBatcher
from recworld.models._tokens import ChatTokens, loglik_response, mean_per_token, sampling_seed
from recworld.models.base import ModelBase
from recworld.models.openai_compat import chat_message
from recworld.models.options import VLLMOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec


def _require_vllm() -> Any:
    return require("vllm", feature="the vllm backend", extra="vllm", package="vllm")


class VLLMModel(ModelBase):
    """A vLLM engine behind the Model protocol."""

    modes = frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK, AnswerMode.RANK})

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
        self._n_ctx = int(engine_args["max_model_len"])
        self._identity = {"backend": "vllm", "model": name, "dtype": str(engine_args.get("dtype", "auto"))}
        self._batcher: MicroBatcher[Request, Response] = MicroBatcher(
            self._generate_batch, max_batch=options.batch_size, wait_s=options.batch_wait_s
        )

    @property
    def context_window(self) -> int:
        return self._n_ctx

    def count_tokens(self, text: str) -> int:
        return len(self.tokens.tokenizer(text, add_special_tokens=False)["input_ids"])

    @property
    def batch_sizes(self) -> list[int]:
        """Sizes of the generation batches run so far (for tests and benchmarks)."""
        return self._batcher.batch_sizes

    async def complete(self, request: Request) -> Response:
        if request.mode in (AnswerMode.LOGLIK, AnswerMode.RANK):
            if any(m.images for m in request.messages):
                raise ModelError(
                    f"vllm scores choices from text only; this {request.mode.value} request has images"
                )
            return await asyncio.to_thread(self._loglik_locked, request)
        if any(m.images for m in request.messages):
            _check_images(request)  # an unreadable image fails this request, not its whole batch
        return await self._batcher.submit(request)

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
        """Text prompts go to ``LLM.generate`` as tokens; prompts with images to ``LLM.chat``."""
        out: list[Response | None] = [None] * len(requests)
        text = [i for i, r in enumerate(requests) if not any(m.images for m in r.messages)]
        imaged = sorted(set(range(len(requests))) - set(text))
        if text:
            prompts = [{"prompt_token_ids": self.prompt_tokens(requests[i].messages)} for i in text]
            outputs = self._llm.generate(prompts, [self.sampling(requests[i]) for i in text], use_tqdm=False)
            for i, prompt, result in zip(text, prompts, outputs, strict=True):
                out[i] = _response(result, len(prompt["prompt_token_ids"]))
        if imaged:
            chats = [[chat_message(m) for m in requests[i].messages] for i in imaged]
            outputs = self._llm.chat(chats, [self.sampling(requests[i]) for i in imaged], use_tqdm=False)
            for i, result in zip(imaged, outputs, strict=True):
                out[i] = _response(result, len(getattr(result, "prompt_token_ids", None) or ()))
        return [r for r in out if r is not None]

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


def _check_images(request: Request) -> None:
    try:
        for message in request.messages:
            chat_message(message)
    except ConfigError as exc:
        raise ModelError(str(exc)) from None


def _response(result: Any, prompt_tokens: int) -> Response:
    first = result.outputs[0]
    return Response(text=first.text, usage=Usage(prompt_tokens, len(first.token_ids)))


def create(spec: ModelSpec, config: ModelConfig) -> VLLMModel:
    """``vllm:<hub repo or local directory>``."""
    if not spec.name:
        raise ConfigError("model spec 'vllm' needs a name: vllm:<model>")
    return VLLMModel(spec.name, config)
