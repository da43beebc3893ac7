"""``hf:<repo-or-path>``: a transformers causal LM (CPU or GPU).

The tokenizer's chat template is used when it has one; otherwise the model is
prompted completion-style like any base model
(:func:`~recworld.models._common.flatten_messages`). Generation is greedy by
default and batched: concurrent requests with the same decoding settings are
gathered by a :class:`~recworld.models._batching.MicroBatcher` and decoded
together with left padding. Loglik runs the prompt once with the KV cache on,
then scores each choice after it, cropping the cache back to the prompt.

``json_schema`` is not enforced here (transformers has no grammar sampler):
the request is decoded unconstrained and the caller validates the JSON.

Options in ``ModelConfig.extra``: ``device`` (default: cuda when available),
``dtype`` ("auto", "float32", "bfloat16", ...), ``batch_size`` (default 8),
``batch_wait_s`` (default 0.01).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld.errors import ConfigError, ModelError, require
from recworld.models._batching import MicroBatcher
from recworld.models._common import (
    best_choice,
    completion_choice,
    file_fingerprint,
    flatten_messages,
    torch_placement,
)
from recworld.models.base import AnswerMode, Message, Request, Response, Usage
from recworld.models.registry import ModelConfig, ModelSpec
from recworld.seeding import child_seed


def _require_transformers() -> Any:
    require("torch", feature="the hf backend", extra="hf", package="torch")
    return require("transformers", feature="the hf backend", extra="hf", package="transformers")


def _local_fingerprint(path: Path) -> str:
    """Names a local checkpoint by content: its config plus the start of each weight file."""
    digest = hashlib.sha256()
    for name in sorted(p.name for p in path.iterdir()):
        if name == "config.json" or name.endswith((".safetensors", ".bin")):
            digest.update(name.encode())
            digest.update(file_fingerprint(path / name).encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class _GenKey:
    """Requests share a batch only when they decode with the same settings."""

    max_tokens: int
    temperature: float
    stop: tuple[str, ...]


class HFModel:
    """A transformers causal LM behind the Model protocol."""

    def __init__(self, name: str, config: ModelConfig) -> None:
        transformers = _require_transformers()
        import torch

        extra = config.extra
        self._torch = torch
        self._device, dtype = torch_placement(extra)
        self._seed = config.seed
        try:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(name)
            self._model = transformers.AutoModelForCausalLM.from_pretrained(name, dtype=dtype)
        except (OSError, ValueError) as exc:
            raise ModelError(f"hf:{name}: cannot load the model or tokenizer: {exc}") from exc
        self._model.to(self._device)
        self._model.eval()
        tok = self._tokenizer
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        tok.padding_side = "left"  # decoder-only models continue from the right edge
        self._is_chat = bool(getattr(tok, "chat_template", None))
        # transformers 5 renamed ``past_key_values`` to ``cache`` (argument and output field).
        params = inspect.signature(self._model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        local = Path(name).expanduser()
        self._identity = {
            "backend": "hf",
            "model": local.name if local.is_dir() else name,
            "dtype": str(self._model.dtype).removeprefix("torch."),
        }
        if local.is_dir():
            self._identity["sha256"] = _local_fingerprint(local)
        self._max_batch = int(extra.get("batch_size", 8))
        self._batcher: MicroBatcher[Request, Response] = MicroBatcher(
            self._generate_batch,
            max_batch=self._max_batch,
            wait_s=float(extra.get("batch_wait_s", 0.01)),
        )

    @property
    def identity(self) -> Mapping[str, str]:
        return self._identity

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK})

    @property
    def max_concurrency(self) -> int:
        """One generation batch at a time: more requests than a batch only queue."""
        return self._max_batch

    @property
    def batch_sizes(self) -> list[int]:
        """Sizes of the generation batches run so far (for tests and benchmarks)."""
        return self._batcher.batch_sizes

    async def complete(self, request: Request) -> Response:
        if request.mode is AnswerMode.LOGLIK:
            return await asyncio.to_thread(self._loglik_locked, request)
        return await self._batcher.submit(request)

    async def aclose(self) -> None:
        return None

    # -- prompts --------------------------------------------------------------------------------

    def prompt_text(self, messages: Sequence[Message]) -> str:
        if self._is_chat:
            chat = [{"role": m.role, "content": m.content} for m in messages]
            text: str = self._tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
            return text
        return flatten_messages(messages)

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        # A chat template writes its own special tokens; a base prompt gets the tokenizer's (BOS).
        ids = self._tokenizer(self.prompt_text(messages), add_special_tokens=not self._is_chat)["input_ids"]
        return [int(i) for i in ids]

    def choice_tokens(self, choice: str) -> list[int]:
        text = choice if self._is_chat else completion_choice(choice)
        ids = [int(i) for i in self._tokenizer(text, add_special_tokens=False)["input_ids"]]
        if not ids:
            raise ModelError(f"choice {choice!r} tokenises to nothing; it cannot be scored")
        return ids

    # -- generate -------------------------------------------------------------------------------

    def _generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        groups: dict[_GenKey, list[int]] = {}
        for i, r in enumerate(requests):
            key = _GenKey(max(1, r.max_tokens), r.temperature, r.stop)
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
            torch.manual_seed(child_seed(self._seed, "hf", "sample"))
        else:
            args.update(temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            generated = self._model.generate(**batch, pad_token_id=tok.pad_token_id, **args)
        width = batch["input_ids"].shape[1]
        responses = []
        for prompt, row in zip(prompts, generated[:, width:].tolist(), strict=True):
            tokens = _until_eos(row, tok.eos_token_id, tok.pad_token_id)
            text = _cut_at_stop(tok.decode(tokens, skip_special_tokens=True), key.stop)
            responses.append(Response(text=text, usage=Usage(len(prompt), len(tokens))))
        return responses

    # -- loglik ---------------------------------------------------------------------------------

    def _loglik_locked(self, request: Request) -> Response:
        with self._batcher.lock:
            return self._loglik(request)

    def _loglik(self, request: Request) -> Response:
        if not request.choices:
            raise ModelError("a loglik request needs choices")
        prefix = self.prompt_tokens(request.messages)
        options = [self.choice_tokens(c) for c in request.choices]
        scores = self.score_tokens(prefix, options)
        return Response(
            text=best_choice(request.choices, scores),
            choice_logprobs=tuple(scores),
            usage=Usage(len(prefix) + sum(len(o) for o in options), 0),
        )

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


def _until_eos(row: list[int], eos: int | None, pad: int | None) -> list[int]:
    """Generated tokens up to (not including) the first EOS; padding after it is dropped."""
    stops = {t for t in (eos, pad) if t is not None}
    for i, token in enumerate(row):
        if token in stops:
            return row[:i]
    return row


def _cut_at_stop(text: str, stop: Sequence[str]) -> str:
    cut = len(text)
    for s in stop:
        at = text.find(s)
        if s and at != -1:
            cut = min(cut, at)
    return text[:cut]


def create(spec: ModelSpec, config: ModelConfig) -> HFModel:
    """``hf:<hub repo or local directory>``."""
    if not spec.name:
        raise ConfigError("model spec 'hf' needs a name: hf:<repo-or-path>")
    return HFModel(spec.name, config)
