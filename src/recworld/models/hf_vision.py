"""``hf-vision:<repo-or-path>``: a transformers vision-language model (LLaVA, LLaVA-1.6, ...).

The checkpoint is loaded with ``AutoProcessor`` and
``AutoModelForImageTextToText`` (LLaVA-1.6 checkpoints fall back to
``LlavaNextForConditionalGeneration`` on transformers versions whose auto
class does not map them). Each message's ``images`` (local paths or
``data:`` URLs) become image entries of the chat turn, so the processor's chat
template places its image placeholders and expands them to the right number of
image tokens. Decoding is greedy unless the request asks for a temperature.

Requests run one at a time under a lock: images of different sizes produce
different numbers of image tokens (LLaVA-1.6 tiles them), so batching would
need padding logic that buys little for describing images offline.

Only ``generate`` mode is served. Options
(:class:`~recworld.models.options.HFVisionOptions`): ``device`` (default: cuda
when available), ``dtype`` ("auto", "float32", "bfloat16", ...).
"""

from __future__ import annotations

import asyncio
import base64
import io
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recworld.capped import is_remote, read_image
from recworld.chat import AnswerMode, Message, Request, Response, Usage
from recworld.errors import ConfigError, DataError, ModelError, require
from recworld.models._tokens import cut_at_stop, sampling_seed, until_eos
from recworld.models._torch import load_torch_model, positions_of
from recworld.models.base import ModelBase
from recworld.models.options import HFVisionOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec
from recworld.seeding import child_seed


def _require() -> Any:
    require("torch", feature="the hf-vision backend", extra="hf", package="torch")
    require("PIL", feature="the hf-vision backend", extra="hf", package="pillow")
    return require("transformers", feature="the hf-vision backend", extra="hf", package="transformers")


def load_image(reference: str) -> Any:
    """A PIL RGB image from a local path (``capped.read_image``) or a ``data:`` URL (nothing downloaded)."""
    from PIL import Image, UnidentifiedImageError

    if is_remote(reference) and not reference.startswith("data:"):
        raise ModelError(f"hf-vision reads local images only; download {reference} first")
    try:
        if reference.startswith("data:"):
            _, _, payload = reference.partition(",")
            data = base64.b64decode(payload)
        else:
            data, _ = read_image(Path(reference).expanduser())
        with Image.open(io.BytesIO(data)) as image:
            return image.convert("RGB")
    except (OSError, DataError, UnidentifiedImageError, ValueError) as exc:
        where = reference if not reference.startswith("data:") else "a data URL"
        raise ModelError(f"{where}: cannot read image: {exc}") from exc


def _model_class(transformers: Any) -> Any:
    """The vision-to-text auto class, or LLaVA-NeXT's own class on versions without it."""
    auto = getattr(transformers, "AutoModelForImageTextToText", None)
    return auto if auto is not None else transformers.LlavaNextForConditionalGeneration


class HFVisionModel(ModelBase):
    """A transformers image-text-to-text model behind the Model protocol."""

    modes = frozenset({AnswerMode.GENERATE})

    def __init__(self, name: str, config: ModelConfig) -> None:
        options = parse_options(HFVisionOptions, config.options, "hf-vision")
        transformers = _require()

        def load(dtype: Any, hub: dict[str, Any]) -> tuple[Any, Any]:
            processor = transformers.AutoProcessor.from_pretrained(name, **hub)
            return processor, _model_class(transformers).from_pretrained(name, dtype=dtype, **hub)

        loaded = load_torch_model("hf-vision", name, options, load)
        self._torch, self._device, self._model = loaded.torch, loaded.device, loaded.model
        self._identity = loaded.identity
        self._seed = config.seed
        self._processor = loaded.processor
        self._tokenizer = self._processor.tokenizer
        self._has_template = bool(getattr(self._processor, "chat_template", None))
        self._image_token = str(getattr(self._processor, "image_token", "<image>"))
        self._lock = threading.Lock()

    @property
    def max_concurrency(self) -> int:
        """Generation runs one request at a time."""
        return 1

    @property
    def context_window(self) -> int | None:
        return positions_of(self._model)

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    async def complete(self, request: Request) -> Response:
        if request.mode is not AnswerMode.GENERATE:
            raise ModelError("hf-vision serves generate mode only")
        return await asyncio.to_thread(self._generate_locked, request)

    # -- prompts --------------------------------------------------------------------------------

    def prompt_text(self, messages: Sequence[Message]) -> str:
        """The prompt with one image placeholder per attached image, before that turn's text."""
        if self._has_template:
            chat = [
                {
                    "role": m.role,
                    "content": [*({"type": "image"} for _ in m.images), {"type": "text", "text": m.content}],
                }
                for m in messages
            ]
            text: str = self._processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
            return text
        # No template (rare for VLM checkpoints): the LLaVA-1.5 plain conversation format.
        turns = [
            f"{m.role.upper()}: " + "".join(f"{self._image_token}\n" for _ in m.images) + m.content
            for m in messages
        ]
        return "\n".join(turns) + "\nASSISTANT:"

    def encode(self, messages: Sequence[Message]) -> Any:
        """Processor outputs (token ids with expanded image tokens, pixel values) for ``messages``."""
        images = [load_image(ref) for m in messages for ref in m.images]
        return self._processor(
            text=self.prompt_text(messages),
            images=images or None,
            return_tensors="pt",
            # A chat template writes its own special tokens (BOS); a plain prompt gets the tokenizer's.
            add_special_tokens=not self._has_template,
        )

    # -- generate -------------------------------------------------------------------------------

    def _generate_locked(self, request: Request) -> Response:
        with self._lock:
            return self.generate(request)

    def generate(self, request: Request) -> Response:
        torch = self._torch
        tok = self._tokenizer
        inputs = self.encode(request.messages).to(self._device)
        if "pixel_values" in inputs and inputs["pixel_values"].is_floating_point():
            inputs["pixel_values"] = inputs["pixel_values"].to(self._model.dtype)
        sample = request.temperature > 0
        args: dict[str, Any] = {"max_new_tokens": max(1, request.max_tokens), "do_sample": sample}
        if sample:
            args["temperature"] = request.temperature
            torch.manual_seed(child_seed(sampling_seed(request, self._seed), "hf-vision", "sample"))
        else:
            args.update(temperature=None, top_p=None, top_k=None)
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        with torch.inference_mode():
            generated = self._model.generate(**inputs, pad_token_id=pad, **args)
        width = inputs["input_ids"].shape[1]
        row = [int(t) for t in generated[0, width:].tolist()]
        tokens = until_eos(row, tok.eos_token_id, pad)
        text = cut_at_stop(tok.decode(tokens, skip_special_tokens=True), request.stop)
        return Response(text=text, usage=Usage(int(width), len(tokens)))


def create(spec: ModelSpec, config: ModelConfig) -> HFVisionModel:
    """``hf-vision:<hub repo or local directory>``."""
    if not spec.name:
        raise ConfigError("model spec 'hf-vision' needs a name: hf-vision:<repo-or-path>")
    return HFVisionModel(spec.name, config)
