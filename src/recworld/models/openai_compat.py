"""``openai:<model>``: any OpenAI-compatible chat server.

That covers OpenAI itself, vLLM, Ollama, the llama.cpp server, SGLang and TGI.

Keys (:mod:`recworld.models._keys`): the key is read from the environment
variable ``ModelConfig.api_key_env`` names and is sent only to this model's
``base_url``; over plain ``http://`` only to a loopback host unless
``allow_insecure_http``. A local server without a key gets the placeholder
``EMPTY``. The key is never part of the identity, a message or an exception.

Failures are classified for the runner, which owns retries and back-off:

* 401, 403, 404: :class:`~recworld.models.base.FatalModelError` (every later
  request would fail the same way; the run stops), one line naming the cause
  and the base URL;
* no connection at all (refused, DNS, TLS): :class:`ConnectionFailedError`;
* 408, 409, 425, 429, 5xx, timeouts, dropped connections, malformed replies:
  :class:`TransientModelError`, with the server's ``Retry-After``;
* any other 4xx, or a reply over ``max_response_bytes``: :class:`ModelError`
  (this sample failed; not retried).

Loglik mode asks for one token with ``top_logprobs=20`` and reads each label's
log-probability from that list. It therefore only scores single-token labels
("A".."J"), and a label outside the top 20 gets ``-inf``.

Rank mode needs PROMPT log-probabilities, which only the legacy completions
endpoint returns (``echo=True, logprobs=1``; vLLM and llama.cpp servers do,
api.openai.com's chat models do not). So it is declared only when ``base_url``
is set. Each option is sent as ``flatten_messages(...) + " " + option`` (the
completion endpoint takes text, so the prompt is the base-model one); the
option's tokens are found by their ``text_offset`` and their log-probabilities
averaged. A server that does not echo them fails the sample with a
:class:`ModelError` saying rank needs prompt logprobs.

Transports (:mod:`recworld.models._transport`), option ``transport``:
``aiohttp`` (pooled keep-alive, the default for a ``base_url`` when no proxy
variable is set) or ``sdk`` (the openai SDK client: OpenAI itself, proxies, a
caller's ``http_client``). Both send the same body and read the same reply
fields from plain JSON, never building pydantic objects for a reply.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import mimetypes
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from recworld.chat import AnswerMode, Message, Request, Response, Usage
from recworld.errors import ConfigError, ModelError
from recworld.models._common import best_choice, completion_choice, flatten_messages
from recworld.models._keys import choose_key
from recworld.models._transport import AiohttpTransport, HTTPReply, SDKTransport
from recworld.models.base import FatalModelError, ModelBase, TransientModelError
from recworld.models.options import OpenAIOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TOP_LOGPROBS = 20
TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
FATAL_STATUS = {
    401: "the server rejected the API key",
    403: "permission denied",
    404: "model not found (or base_url lacks the API path, such as /v1)",
}
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
RANK_NEEDS = (
    "rank mode needs prompt logprobs from the completions endpoint (echo=True, logprobs=1), "
    "as vLLM and llama.cpp servers return"
)


def image_url(reference: str) -> str:
    """A URL the chat API accepts for an image: data and http(s) URLs pass, local files are inlined."""
    if reference.startswith(("data:", "http://", "https://")):
        return reference
    path = Path(reference).expanduser()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read image: {exc.strerror}") from exc
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def chat_message(message: Message) -> dict[str, Any]:
    """One message in the chat-completions format (content parts when it carries images)."""
    if not message.images:
        return {"role": message.role, "content": message.content}
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    parts.extend({"type": "image_url", "image_url": {"url": image_url(img)}} for img in message.images)
    return {"role": message.role, "content": parts}


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        import time

        return max(0.0, when.timestamp() - time.time())


class OpenAICompatModel(ModelBase):
    """A chat model behind an OpenAI-compatible HTTP API."""

    def __init__(self, model: str, config: ModelConfig, *, http_client: Any = None) -> None:
        options = parse_options(OpenAIOptions, config.options, "openai")
        self._model = model
        self._base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        self._key = choose_key(
            model, config.base_url, DEFAULT_BASE_URL, config.api_key_env, config.allow_insecure_http
        )
        self._where = f"openai:{model} at {self._base_url}"
        self._seed = config.seed
        self._max_tokens_param = options.max_tokens_param
        # Only a server we were pointed at may echo prompt logprobs; OpenAI's chat models do not.
        self._can_rank = config.base_url is not None
        self.transport = _pick_transport(options, config.base_url, http_client)
        self._http: AiohttpTransport | SDKTransport
        if self.transport == "aiohttp":
            self._http = AiohttpTransport(
                self._base_url,
                {"Authorization": f"Bearer {self._key.token}"},
                max_connections=options.max_connections,
                max_response_bytes=options.max_response_bytes,
                connect_timeout_s=options.connect_timeout_s,
            )
        else:
            self._http = SDKTransport(
                self._base_url,
                self._key.token,
                http_client=http_client,
                max_response_bytes=options.max_response_bytes,
            )

    def __repr__(self) -> str:
        return f"OpenAICompatModel(model={self._model!r}, base_url={self._base_url!r})"

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "openai", "model": self._model, "base_url": self._base_url}

    @property
    def supports(self) -> frozenset[AnswerMode]:
        modes = {AnswerMode.GENERATE, AnswerMode.LOGLIK}
        if self._can_rank:
            modes.add(AnswerMode.RANK)
        return frozenset(modes)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(self, request: Request) -> Response:
        if request.mode is AnswerMode.LOGLIK:
            return await self._loglik(request)
        if request.mode is AnswerMode.RANK:
            return await self._rank(request)
        return await self._generate(request)

    def _base_args(self, request: Request) -> dict[str, Any]:
        seed = getattr(request, "seed", None)
        return {
            "model": self._model,
            "messages": [chat_message(m) for m in request.messages],
            "temperature": request.temperature,
            "seed": self._seed if seed is None else seed,
        }

    async def _generate(self, request: Request) -> Response:
        args = self._base_args(request)
        args[self._max_tokens_param] = max(1, request.max_tokens)
        if request.stop:
            args["stop"] = list(request.stop)
        if request.json_schema is not None:
            args["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": dict(request.json_schema)},
            }
        reply = await self._call(args)
        content = _message(reply).get("content")
        if not isinstance(content, str):
            raise TransientModelError(f"{self._model}: the server replied without message content")
        return Response(text=content, usage=_usage(reply))

    async def _loglik(self, request: Request) -> Response:
        if not request.choices:
            raise ModelError("a loglik request needs choices")
        args = self._base_args(request)
        args[self._max_tokens_param] = 1
        args["logprobs"] = True
        args["top_logprobs"] = TOP_LOGPROBS
        reply = await self._call(args)
        try:
            first = _choice(reply)["logprobs"]["content"][0]
            top = [(str(t["token"]), float(t["logprob"])) for t in first["top_logprobs"]]
        except (LookupError, TypeError, ValueError, TransientModelError) as exc:
            raise TransientModelError(
                f"{self._model}: the server returned no token logprobs (does it support them?)"
            ) from exc
        scores = tuple(_label_logprob(label, top) for label in request.choices)
        if all(math.isinf(s) for s in scores):
            text = str(_message(reply).get("content") or "")
        else:
            text = best_choice(request.choices, scores)
        return Response(text=text, choice_logprobs=scores, usage=_usage(reply))

    async def _rank(self, request: Request) -> Response:
        """Each option's text after the prompt, mean log-probability per token, one request each."""
        if not self._can_rank:
            raise ConfigError(f"{self._where}: {RANK_NEEDS}; set base_url to such a server")
        if not request.choices:
            raise ModelError("a rank request needs choices")
        if any(m.images for m in request.messages):
            raise ModelError(f"{self._where}: rank mode scores text only; this request has images")
        prompt = flatten_messages(request.messages)
        scored = await asyncio.gather(*(self._echo(prompt, completion_choice(c)) for c in request.choices))
        scores = tuple(total / count for total, count, _ in scored)
        return Response(
            text=best_choice(request.choices, scores),
            choice_logprobs=scores,
            usage=Usage(
                sum(u.prompt_tokens for *_, u in scored), sum(u.completion_tokens for *_, u in scored)
            ),
        )

    async def _echo(self, prompt: str, continuation: str) -> tuple[float, int, Usage]:
        """Summed log-probability and token count of ``continuation`` after ``prompt``."""
        text = prompt + continuation
        args = {"model": self._model, "prompt": text, "echo": True, "logprobs": 1, "max_tokens": 1}
        args["temperature"] = 0.0
        try:
            reply = await self._call(args, "/completions")
        except ModelError as exc:  # a 400: the server refuses echo or logprobs
            raise ModelError(f"{exc}; {RANK_NEEDS}") from None
        try:
            total, count = span_logprob(_choice(reply), len(prompt), text)
        except ModelError as exc:
            raise ModelError(f"{self._where}: {exc}; {RANK_NEEDS}") from None
        return total, count, _usage(reply)

    async def _call(self, args: dict[str, Any], path: str = "/chat/completions") -> dict[str, Any]:
        """The reply as plain JSON, or a classified error."""
        try:
            reply = await self._http.post(path, args)
        except (TransientModelError, ModelError) as exc:
            raise type(exc)(self._redact(f"{self._where}: {exc}"), **_retry_kw(exc)) from None
        if not 200 <= reply.status < 300:
            raise classify_status(reply, self._where, self._key.note, self._redact)
        try:
            data = json.loads(reply.body)
        except ValueError as exc:
            raise TransientModelError(self._redact(f"{self._model}: malformed reply: {exc}")) from None
        if not isinstance(data, dict):
            raise TransientModelError(f"{self._model}: malformed reply: not a JSON object")
        return data

    def _redact(self, text: str) -> str:
        """Servers sometimes echo the key in errors; never let it reach a log."""
        secret = self._key.secret
        return text.replace(secret, "***") if secret else text


def _retry_kw(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, TransientModelError):
        return {"retry_after": exc.retry_after}
    return {}


def classify_status(reply: HTTPReply, where: str, key_note: str, redact: Callable[[str], str]) -> Exception:
    """The error a non-2xx reply stands for (see the module docstring)."""
    status = reply.status
    said = _error_message(reply.body)
    if status in FATAL_STATUS:
        cause = FATAL_STATUS[status]
        extra = f"; {key_note}" if status in (401, 403) else ""
        return FatalModelError(redact(f"{where}: {cause} (HTTP {status}{extra}): {said}"))
    detail = redact(f"{where}: server returned HTTP {status}: {said}")
    if status in TRANSIENT_STATUS or status >= 500:
        return TransientModelError(detail, retry_after=_retry_after(reply.headers))
    return ModelError(detail)


def _label_logprob(label: str, top: list[tuple[str, float]]) -> float:
    """log P(label) as the first token: the sum over tokens that spell it (" A", "A")."""
    matches = [lp for token, lp in top if token.strip() == label]
    if not matches:
        return -math.inf
    peak = max(matches)
    return peak + math.log(sum(math.exp(lp - peak) for lp in matches))


def span_logprob(choice: Mapping[str, Any], start: int, text: str) -> tuple[float, int]:
    """Sum and count of the echoed token logprobs covering ``text[start:]``.

    Tokens are placed by ``text_offset``; a token that straddles ``start``
    belongs to the continuation (its logprob is conditioned on the prompt
    before it). The generated token, at or past ``len(text)``, is left out.
    """
    try:
        logprobs = choice["logprobs"]
        offsets = [int(o) for o in logprobs["text_offset"]]
        values = list(logprobs["token_logprobs"])
        echoed = str(choice.get("text", "")).startswith(text)
    except (LookupError, TypeError, ValueError) as exc:
        raise ModelError("the server returned no prompt logprobs") from exc
    if not echoed or len(offsets) != len(values):
        raise ModelError("the server did not echo the prompt with its logprobs")
    first = next((i for i, o in enumerate(offsets) if o >= start), len(offsets))
    if first > 0 and (first == len(offsets) or offsets[first] > start):
        first -= 1
    last = next((i for i, o in enumerate(offsets) if o >= len(text)), len(offsets))
    span = values[first:last]
    if not span or first == 0 or any(not isinstance(v, int | float) for v in span):
        raise ModelError("the server returned no logprobs for the scored option")
    return float(sum(span)), len(span)


def _pick_transport(options: OpenAIOptions, base_url: str | None, http_client: Any) -> str:
    if http_client is not None:
        if options.transport == "aiohttp":
            raise ConfigError("the openai backend's option 'transport': 'aiohttp' cannot use an http_client")
        return "sdk"
    if options.transport != "auto":
        return options.transport
    proxied = any(os.environ.get(v) or os.environ.get(v.upper()) for v in PROXY_VARIABLES)
    return "aiohttp" if base_url is not None and not proxied else "sdk"


def _choice(reply: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise TransientModelError("the server replied without choices")
    return choices[0]


def _message(reply: Mapping[str, Any]) -> Mapping[str, Any]:
    message = _choice(reply).get("message")
    return message if isinstance(message, dict) else {}


def _error_message(body: bytes) -> str:
    """The ``error.message`` of an error body, else its start; always one line of at most 300 chars."""
    try:
        data = json.loads(body)
        message = data["error"]["message"] if isinstance(data.get("error"), dict) else data["error"]
        text = str(message)
    except (ValueError, LookupError, TypeError, AttributeError):
        text = body[:300].decode("utf-8", "replace")
    return " ".join(text.split())[:300] or "(empty body)"


def _usage(reply: Mapping[str, Any]) -> Usage:
    usage = reply.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    try:
        return Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (TypeError, ValueError):
        return Usage()


def create(spec: ModelSpec, config: ModelConfig) -> OpenAICompatModel:
    """``openai:<model>``; ``config.base_url`` points at any compatible server."""
    if not spec.name:
        raise ConfigError("model spec 'openai' needs a name: openai:<model>")
    return OpenAICompatModel(spec.name, config)
