"""``openai:<model>``: any OpenAI-compatible chat server.

That covers OpenAI itself, vLLM, Ollama, the llama.cpp server, SGLang and TGI.

The API key is read from the environment variable ``ModelConfig.api_key_env``
(default ``OPENAI_API_KEY``); a local server (``base_url`` set) needs none and
gets the placeholder ``EMPTY``. The key lives only inside the SDK client: it
is never part of the identity, of a message, or of an exception.

SDK retries are off: the runner owns retries and back-off, and it needs to see
each failure classified: rate limits (with the server's ``Retry-After``), 5xx,
timeouts, dropped connections and malformed replies are
:class:`~recworld.models.base.TransientModelError`; any other 4xx is a
:class:`~recworld.errors.ModelError`.

Loglik mode asks for one token with ``top_logprobs=20`` and reads each label's
log-probability from that list. It therefore only scores single-token labels
("A".."J"), and a label outside the top 20 gets ``-inf``.

Two transports carry the same request body and read the same reply fields
(``choices[0].message.content``, ``choices[0].logprobs``, ``usage``) from the
plain JSON, never building pydantic objects for a reply:

* ``sdk``: the openai SDK client (``AsyncOpenAI.post``), with its httpx pool,
  proxies and error types. Used for OpenAI itself, behind a proxy, and
  whenever an ``http_client`` is passed in.
* ``raw``: :class:`recworld.models._http.LeanHTTPClient`, a minimal HTTP/1.1
  keep-alive client. The SDK costs 5 to 10 ms of CPU per request (its pool
  polls every pooled socket per request; it builds pydantic objects around
  each call), which caps a local server at about 100 requests/s on a small
  machine; the raw transport is over ten times cheaper.

``ModelConfig.extra["transport"]`` picks one: ``"auto"`` (default: ``raw``
when ``base_url`` is set and no proxy variable is set, else ``sdk``),
``"sdk"`` or ``"raw"``.
"""

from __future__ import annotations

import base64
import json
import math
import mimetypes
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recworld.errors import ConfigError, ModelError
from recworld.models._common import best_choice
from recworld.models._http import HTTPTransportError, LeanHTTPClient
from recworld.models.base import AnswerMode, Message, Request, Response, TransientModelError, Usage
from recworld.models.registry import ModelConfig, ModelSpec

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "EMPTY"
TOP_LOGPROBS = 20
TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
TRANSPORTS = ("auto", "sdk", "raw")
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


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


class OpenAICompatModel:
    """A chat model behind an OpenAI-compatible HTTP API."""

    def __init__(self, model: str, config: ModelConfig, *, http_client: Any = None) -> None:
        key = os.environ.get(config.api_key_env, "")
        if not key:
            if config.base_url is None:
                raise ConfigError(
                    f"openai:{model} needs an API key in the environment variable {config.api_key_env!r} "
                    "(or a --base-url for a local server)"
                )
            key = PLACEHOLDER_KEY
        self._model = model
        self._base_url = config.base_url or DEFAULT_BASE_URL
        self._seed = config.seed
        self._max_tokens_param = str(config.extra.get("max_tokens_param", "max_tokens"))
        self._secret = key
        self.transport = _pick_transport(config, http_client)
        self._client: Any = None
        self._raw: LeanHTTPClient | None = None
        if self.transport == "raw":
            try:
                self._raw = LeanHTTPClient(
                    self._base_url,
                    {"Authorization": f"Bearer {key}", "User-Agent": "recworld-openai-compat"},
                    max_connections=int(config.extra.get("max_connections", 256)),
                )
            except ValueError as exc:
                raise ConfigError(f"base_url: {exc}") from None
        else:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=key,
                base_url=self._base_url,
                max_retries=0,
                http_client=http_client,
            )

    def __repr__(self) -> str:
        return f"OpenAICompatModel(model={self._model!r}, base_url={self._base_url!r})"

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "openai", "model": self._model, "base_url": self._base_url}

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK})

    async def aclose(self) -> None:
        if self._raw is not None:
            await self._raw.aclose()
        if self._client is not None:
            await self._client.close()

    async def complete(self, request: Request) -> Response:
        if request.mode is AnswerMode.LOGLIK:
            return await self._loglik(request)
        return await self._generate(request)

    def _base_args(self, request: Request) -> dict[str, Any]:
        return {
            "model": self._model,
            "messages": [chat_message(m) for m in request.messages],
            "temperature": request.temperature,
            "seed": self._seed,
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

    async def _call(self, args: dict[str, Any]) -> dict[str, Any]:
        """The reply as plain JSON, or a classified error."""
        body = await (self._call_raw(args) if self._raw is not None else self._call_sdk(args))
        try:
            reply = json.loads(body)
        except ValueError as exc:
            raise TransientModelError(self._redact(f"{self._model}: malformed reply: {exc}")) from None
        if not isinstance(reply, dict):
            raise TransientModelError(f"{self._model}: malformed reply: not a JSON object")
        return reply

    async def _call_raw(self, args: dict[str, Any]) -> bytes:
        assert self._raw is not None
        payload = json.dumps(args, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        try:
            reply = await self._raw.post("/chat/completions", payload)
        except HTTPTransportError as exc:
            raise TransientModelError(self._redact(f"{self._model}: connection error: {exc}")) from None
        status = reply.status
        if 200 <= status < 300:
            return reply.body
        detail = self._redact(f"{self._model}: server returned HTTP {status}: {_error_message(reply.body)}")
        if status in TRANSIENT_STATUS or status >= 500:
            retry = _retry_after(reply.headers) if status == 429 else None
            raise TransientModelError(detail, retry_after=retry)
        raise ModelError(detail)

    async def _call_sdk(self, args: dict[str, Any]) -> bytes:
        import openai

        try:
            # ``post`` with the HTTP response type skips the SDK's request transform and
            # its pydantic reply model; errors are still the SDK's classified exceptions.
            response = await self._client.post("/chat/completions", body=args, cast_to=_sdk_response_type())
            return bytes(response.content)
        except openai.APIStatusError as exc:
            status = exc.status_code
            detail = self._redact(f"{self._model}: server returned HTTP {status}: {exc.message}")
            if status in TRANSIENT_STATUS or status >= 500:
                retry = _retry_after(exc.response.headers) if status == 429 else None
                raise TransientModelError(detail, retry_after=retry) from None
            raise ModelError(detail) from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise TransientModelError(self._redact(f"{self._model}: {type(exc).__name__}: {exc}")) from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise TransientModelError(self._redact(f"{self._model}: malformed reply: {exc}")) from None

    def _redact(self, text: str) -> str:
        """Servers sometimes echo the key in errors; never let it reach a log."""
        if self._secret and self._secret != PLACEHOLDER_KEY:
            text = text.replace(self._secret, "***")
        return text


def _label_logprob(label: str, top: list[tuple[str, float]]) -> float:
    """log P(label) as the first token: the sum over tokens that spell it (" A", "A")."""
    matches = [lp for token, lp in top if token.strip() == label]
    if not matches:
        return -math.inf
    peak = max(matches)
    return peak + math.log(sum(math.exp(lp - peak) for lp in matches))


def _pick_transport(config: ModelConfig, http_client: Any) -> str:
    choice = str(config.extra.get("transport", "auto")).lower()
    if choice not in TRANSPORTS:
        raise ConfigError(f"extra.transport: {choice!r} is not one of {', '.join(TRANSPORTS)}")
    if http_client is not None:
        if choice == "raw":
            raise ConfigError("extra.transport: 'raw' cannot use a caller-supplied http_client")
        return "sdk"
    if choice != "auto":
        return choice
    proxied = any(os.environ.get(v) or os.environ.get(v.upper()) for v in PROXY_VARIABLES)
    return "raw" if config.base_url is not None and not proxied else "sdk"


def _sdk_response_type() -> Any:
    """The HTTP response class the SDK is built on (httpx2 in recent releases, httpx before)."""
    try:
        import httpx2

        return httpx2.Response
    except ImportError:  # pragma: no cover - older SDKs
        import httpx

        return httpx.Response


def _choice(reply: Mapping[str, Any]) -> Mapping[str, Any]:
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise TransientModelError("the server replied without choices")
    return choices[0]


def _message(reply: Mapping[str, Any]) -> Mapping[str, Any]:
    message = _choice(reply).get("message")
    return message if isinstance(message, dict) else {}


def _error_message(body: bytes) -> str:
    """The ``error.message`` of an error body, else its first 200 characters."""
    try:
        data = json.loads(body)
        message = data["error"]["message"] if isinstance(data.get("error"), dict) else data["error"]
        return str(message)
    except (ValueError, LookupError, TypeError, AttributeError):
        return body[:200].decode("utf-8", "replace")


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
