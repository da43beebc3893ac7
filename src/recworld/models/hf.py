"""``hf:<repo-or-path>``: a transformers causal LM (CPU or GPU).

The tokenizer's chat template is used when it has one; otherwise the model is
prompted completion-style like any base model
(:func:`~recworld.models._common.flatten_messages`). Generation is greedy by
default and batched: concurrent requests with the same decoding settings are
gathered by a :class:`~recworld.models._batching.MicroBatcher` and decoded
together with left padding. Loglik runs the prompt once with the KV cache on,
then scores each choice after it, cropping the cache back to the prompt. Rank
mode scores each option's text the same way, divided by its token count.

``json_schema`` is not enforced here (transformers has no grammar sampler):
the request is decoded unconstrained and the caller validates the JSON.

Options (:class:`~recworld.models.options.HFOptions`): ``device`` (default:
cuda when available), ``dtype`` ("auto", "float32", "bfloat16", ...),
``batch_size`` (default 8), ``batch_wait_s`` (default 0.01). A hub name that is
neither cached nor downloadable fails at once (:mod:`recworld.models._hub`).
Prompt and choice tokens come from :class:`~recworld.models._tokens.ChatTokens`,
shared with hf-vision and vLLM.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recworld.chat import AnswerMode, Message, Request, Response, Usage
from recworld.errors import ConfigError, ModelError, require
from recworld.models._batching import MicroBatcher
from recworld.models._tokens import (
    ChatTokens,
    cut_at_stop,
    loglik_response,
    mean_per_token,
    sampling_seed,
    until_eos,
)
from recworld.models._torch import load_torch_model, positions_of
from recworld.models.base import ModelBase
from recworld.models.options import HFOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec
from recworld.seeding import child_seed


def _require_transformers() -> Any:
    require("torch", feature="the hf backend", extra="hf", package="torch")
    return require("transformers", feature="the hf backend", extra="hf", package="transformers")


@dataclass(frozen=True)
class _GenKey:
    """Requests share a batch only when they decode with the same settings."""

    max_tokens: int
    temperature: float
    stop: tuple[str, ...]
    seed: int | None  # None for greedy decoding, where the seed changes nothing


class HFModel(ModelBase):
    """A transformers causal LM behind the Model protocol."""

    modes = frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK, AnswerMode.RANK})

    def __init__(self, name: str, config: ModelConfig) -> None:
        options = parse_options(HFOptions, config.options, "hf")
        transformers = _require_transformers()

        def load(dtype: Any, hub: dict[str, Any]) -> tuple[Any, Any]:
            tokenizer = transformers.AutoTokenizer.from_pretrained(name, **hub)
            return tokenizer, transformers.AutoModelForCausalLM.from_pretrained(name, dtype=dtype, **hub)

        loaded = load_torch_model("hf", name, options, load)
        self._torch, self._device, self._model = loaded.torch, loaded.device, loaded.model
        self._identity = loaded.identity
        self._seed = config.seed
        self._tokenizer = tok = loaded.processor
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        tok.padding_side = "left"  # decoder-only models continue from the right edge
        self.tokens = ChatTokens(tok)
        # transformers 5 renamed ``past_key_values`` to ``cache`` (argument and output field).
        params = inspect.signature(self._model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self._max_batch = options.batch_size
        self._batcher: MicroBatcher[Request, Response] = MicroBatcher(
            self._generate_batch, max_batch=self._max_batch, wait_s=options.batch_wait_s
        )

    @property
    def max_concurrency(self) -> int:
        """One generation batch at a time: more requests than a batch only queue."""
        return self._max_batch

    @property
    def context_window(self) -> int | None:
        return positions_of(self._model)

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    @property
    def batch_sizes(self) -> list[int]:
        """Sizes of the generation batches run so far (for tests and benchmarks)."""
        return self._batcher.batch_sizes

    async def complete(self, request: Request) -> Response:
        if request.mode in (AnswerMode.LOGLIK, AnswerMode.RANK):
            return await asyncio.to_thread(self._loglik_locked, request)
        return await self._batcher.submit(request)

    # -- prompts --------------------------------------------------------------------------------

    def prompt_text(self, messages: Sequence[Message]) -> str:
        return self.tokens.prompt_text(messages)

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        return self.tokens.prompt_tokens(messages)

    def choice_tokens(self, choice: str) -> list[int]:
        return self.tokens.choice_tokens(choice)

    # -- generate -------------------------------------------------------------------------------

    def _generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        groups: dict[_GenKey, list[int]] = {}
        for i, r in enumerate(requests):
            seed = sampling_seed(r, self._seed) if r.temperature > 0 else None
            key = _GenKey(max(1, r.max_tokens), r.temperature, r.stop, seed)
            groups.setdefault(key, []).append(i)
        out: list[Response | None] = [None] * len(requests)
        for key, members in groups.items():
            for i, response in zip(
                members, self._generate_group(key, [requests[i] for i in members]), strict=True
            ):
                out[i] = response
        return [r for r in out if r is not None]

    def _generate_group(self, key: _GenKey, requests: Sequence[Request]) -> list[Response]:
        torch = self._torch
        tok = self._tokenizer
        prompts = [self.prompt_tokens(r.messages) for r in requests]
        batch = tok.pad({"input_ids": prompts}, padding=True, return_tensors="pt").to(self._device)
        sample = key.temperature > 0
        args: dict[str, Any] = {"max_new_tokens": key.max_tokens, "do_sample": sample}
        if sample:
            args["temperature"] = key.temperature
            torch.manual_seed(child_seed(key.seed or 0, "hf", "sample"))
        else:
            args.update(temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            generated = self._model.generate(**batch, pad_token_id=tok.pad_token_id, **args)
        width = batch["input_ids"].shape[1]
        responses = []
        for prompt, row in zip(prompts, generated[:, width:].tolist(), strict=True):
            tokens = until_eos(row, tok.eos_token_id, tok.pad_token_id)
            text = cut_at_stop(tok.decode(tokens, skip_special_tokens=True), key.stop)
            responses.append(Response(text=text, usage=Usage(len(prompt), len(tokens))))
        return responses

    # -- loglik ---------------------------------------------------------------------------------

    def _loglik_locked(self, request: Request) -> Response:
        with self._batcher.lock:
            return self._loglik(request)

    def _loglik(self, request: Request) -> Response:
        """Loglik sums each label's tokens; rank averages each option text's tokens."""
        score = self.score_tokens if request.mode is AnswerMode.LOGLIK else mean_per_token(self.score_tokens)
        return loglik_response(request, self.tokens, score)

    def score_tokens(self, prefix: Sequence[int], options: Sequence[Sequence[int]]) -> list[float]:
        """Sum of log P(option tokens | prefix): the prefix runs once, its cache serves every option."""
        torch = self._torch
        if not prefix:
            raise ModelError("cannot score choices after an empty prompt")
        with torch.inference_mode():
            ids = torch.tensor([list(prefix)], device=self._device)
            out = self._model(input_ids=ids, use_cache=True)
            cache = getattr(out, self._cache_arg)
            first = torch.log_softmax(out.logits[0, -1].double(), dim=-1)
            scores = []
            for option in options:
                total = float(first[option[0]])
                if len(option) > 1:
                    tail = torch.tensor([list(option[:-1])], device=self._device)
                    step = self._model(input_ids=tail, use_cache=True, **{self._cache_arg: cache})
                    rows = torch.log_softmax(step.logits[0].double(), dim=-1)
                    total += float(sum(rows[j, option[j + 1]] for j in range(len(option) - 1)))
                    # A negative crop removes that many trailing tokens, in every transformers version.
                    cache.crop(-len(tail[0]))
                scores.append(total)
        return scores


def create(spec: ModelSpec, config: ModelConfig) -> HFModel:
    """``hf:<hub repo or local directory>``."""
    if not spec.name:
        raise ConfigError("model spec 'hf' needs a name: hf:<repo-or-path>")
    return HFModel(spec.name, config)
