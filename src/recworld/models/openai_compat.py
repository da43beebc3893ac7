"""``openai:<model>``: any OpenAI-compatible chat server.

That covers OpenAI itself, vLLM, Ollama, the llama.cpp server, SGLang and TGI.

Keys (:mod:`recworld.models._keys`): the key is read from the environment
variable ``ModelConfig.api_key_env`` names and is sent only to this model's
``base_url``; over plain ``http://`` only to a loopback host unless
``allow_insecure_http``, and never through a proxy. A local server without a key
gets the placeholder ``EMPTY``. The key is never part of the identity, a message
or an exception, and every text a server sent (error bodies and successful
replies alike) is redacted before it is cut, stored or shown.

Failures are classified for the runner, which owns retries and back-off:

* 401, 403, 404: :class:`~recworld.models.base.FatalModelError` (every later
  request would fail the same way; the run stops), one line naming the cause
  and the base URL;
* no connection at all (refused, DNS, TLS): :class:`ConnectionFailedError`;
* 408, 409, 425, 429, 5xx, timeouts, dropped connections, malformed replies
  (not JSON, nested past :data:`recworld.io.MAX_JSON_DEPTH`, wrong types,
  numbers out of range such as ``usage: 1e400``): :class:`TransientModelError`,
  with the server's ``Retry-After``; a malformed reply is a sample error after
  its retries, never a crash;
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

Context window (:attr:`OpenAICompatModel.context_window`, read by callers that budget
prompts, such as LUNAR's Full context): what the server reports, once
:meth:`~OpenAICompatModel.discover_context_window` asked its ``GET /models`` (vLLM's
``max_model_len``; ``context_length`` or ``max_context_length`` elsewhere), else the
dated table of API models (:mod:`recworld.models.windows`), else None (unknown).

Transports (:mod:`recworld.models._transport`), option ``transport``:
``aiohttp`` (pooled keep-alive, the default for a ``base_url`` no proxy applies
to; loopback never goes through a proxy) or ``sdk`` (the openai SDK's httpx
client: OpenAI itself, a proxy from ``*_proxy``/``no_proxy``, a caller's
``http_client``). Both send the same body and read the same reply fields from
plain JSON, never building pydantic objects for a reply.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recworld.capped import RefusedFileError, is_remote, read_image
from recworld.chat import AnswerMode, Message, Request, Response, Usage
from recworld.errors import ConfigError, DataError, ModelError
from recworld.models._common import best_choice, completion_choice, flatten_messages
from recworld.models._keys import choose_key, proxy_for
from recworld.models._replies import (
    BAD_VALUE,
    choice_of,
    classify_status,
    logprob_of,
    message_of,
    parse_reply,
    span_logprob,
    usage_of,
)
from recworld.models._transport import AiohttpTransport, SDKTransport
from recworld.models.base import ModelBase, TransientModelError
from recworld.models.options import OpenAIOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec
from recworld.models.windows import ServedWindow, known_context_window, known_model, served_window

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_log = logging.getLogger(__name__)


TOP_LOGPROBS = 20
# The SDK sends these from the environment when set; so does the sdk transport.
SDK_HEADER_VARIABLES = {"OpenAI-Organization": "OPENAI_ORG_ID", "OpenAI-Project": "OPENAI_PROJECT_ID"}
RANK_NEEDS = (
    "rank mode needs prompt logprobs from the completions endpoint (echo=True, logprobs=1), "
    "as vLLM and llama.cpp servers return"
)


def image_url(reference: str) -> str:
    """A URL the chat API accepts for an image: a URL passes as given, a local image file is inlined.

    The file is read the one capped way (:func:`recworld.capped.read_image`: a
    regular file, an image signature, at most ``IMAGE_LIMIT`` bytes), and its
    media type is the format its bytes show, not its name.
    """
    if is_remote(reference):
        return reference
    path = Path(reference).expanduser()
    try:
        data, fmt = read_image(path)
    except RefusedFileError as exc:
        raise ConfigError(f"{path}: cannot read image: {exc.detail}") from None
    return f"data:image/{fmt.lower()};base64,{base64.b64encode(data).decode('ascii')}"


def chat_message(message: Message) -> dict[str, Any]:
    """One message in the chat-completions format (content parts when it carries images)."""
    if not message.images:
        return {"role": message.role, "content": message.content}
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    parts.extend({"type": "image_url", "image_url": {"url": image_url(img)}} for img in message.images)
    return {"role": message.role, "content": parts}


class OpenAICompatModel(ModelBase):
    """A chat model behind an OpenAI-compatible HTTP API."""

    def __init__(self, model: str, config: ModelConfig, *, http_client: Any = None) -> None:
        options = parse_options(OpenAIOptions, config.options, "openai")
        self._model = model
        self._base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        self.transport = _pick_transport(options, config.base_url, http_client)
        proxy = _route(self.transport, self._base_url, http_client)
        self._key = choose_key(
            model,
            config.base_url,
            DEFAULT_BASE_URL,
            config.api_key_env,
            config.allow_insecure_http,
            proxy=proxy,
        )
        self._where = f"openai:{model} at {self._base_url}"
        self._seed = config.seed
        self._max_tokens_param = options.max_tokens_param
        # Only a server we were pointed at may echo prompt logprobs; OpenAI's chat models do not.
        self._can_rank = config.base_url is not None
        self._served: ServedWindow | None = None  # what GET /models reported (discover_context_window)
        self._asked_window = False
        headers = {"Authorization": f"Bearer {self._key.token}"}
        self._http: AiohttpTransport | SDKTransport
        if self.transport == "aiohttp":
            self._http = AiohttpTransport(
                self._base_url,
                headers,
                max_connections=options.max_connections,
                max_response_bytes=options.max_response_bytes,
                connect_timeout_s=options.connect_timeout_s,
                redact=self._key.redact,
            )
        else:
            extra = {h: os.environ[v] for h, v in SDK_HEADER_VARIABLES.items() if os.environ.get(v)}
            self._http = SDKTransport(
                self._base_url,
                {**headers, **extra},
                http_client=http_client,
                max_response_bytes=options.max_response_bytes,
                proxy=proxy,
                redact=self._key.redact,
            )

    def __repr__(self) -> str:
        return f"OpenAICompatModel(model={self._model!r}, base_url={self._base_url!r})"

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "openai", "model": self._model, "base_url": self._base_url}

    @property
    def context_window(self) -> int | None:
        """The server's window for this model, else the known table's, else the server's only entry's."""
        served = self._served
        if served is not None and served.exact:
            return served.tokens
        return known_context_window(self._model) or (served.tokens if served is not None else None)

    @property
    def context_window_source(self) -> str | None:
        """Where :attr:`context_window` came from: ``server``, ``table (checked YYYY-MM)`` or None."""
        served = self._served
        found = known_model(self._model)
        if served is not None and (served.exact or found is None):
            return f"server {self._base_url}/models{served.note(self._model)}"
        return f"known-model table (checked {found[1]})" if found else None

    async def discover_context_window(self) -> int | None:
        """Ask a server we were pointed at for its window (``GET /models``, once); :attr:`context_window`.

        Best effort: a server without the endpoint, or one that reports no window,
        leaves the table's value (or None); a failing server is reported by the
        requests that follow, not here.
        """
        if self._can_rank and not self._asked_window:
            self._asked_window = True
            try:
                reply = await self._http.get("/models")
                if 200 <= reply.status < 300:
                    self._served = served_window(parse_reply(reply.body), self._model)
            except (TransientModelError, ModelError, DataError) as exc:
                _log.debug("%s: no context window from GET /models: %s", self._where, exc)
        return self.context_window

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
        content = message_of(reply).get("content")
        if not isinstance(content, str):
            raise TransientModelError(f"{self._model}: the server replied without message content")
        return Response(text=self._key.redact(content), usage=usage_of(reply))

    async def _loglik(self, request: Request) -> Response:
        if not request.choices:
            raise ModelError("a loglik request needs choices")
        args = self._base_args(request)
        args[self._max_tokens_param] = 1
        args["logprobs"] = True
        args["top_logprobs"] = TOP_LOGPROBS
        reply = await self._call(args)
        try:
            first = choice_of(reply)["logprobs"]["content"][0]
            top = [(str(t["token"]), logprob_of(t["logprob"])) for t in first["top_logprobs"]]
        except (*BAD_VALUE, TransientModelError) as exc:
            raise TransientModelError(
                f"{self._model}: the server returned no token logprobs (does it support them?)"
            ) from exc
        scores = tuple(_label_logprob(label, top) for label in request.choices)
        if all(math.isinf(s) for s in scores):
            text = self._key.redact(str(message_of(reply).get("content") or ""))
        else:
            text = best_choice(request.choices, scores)
        return Response(text=text, choice_logprobs=scores, usage=usage_of(reply))

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
            total, count = span_logprob(choice_of(reply), len(prompt), text)
        except ModelError as exc:
            raise ModelError(f"{self._where}: {exc}; {RANK_NEEDS}") from None
        return total, count, usage_of(reply)

    async def _call(self, args: dict[str, Any], path: str = "/chat/completions") -> dict[str, Any]:
        """The reply as plain JSON, or a classified error."""
        try:
            reply = await self._http.post(path, args)
        except (TransientModelError, ModelError) as exc:
            raise type(exc)(self._key.redact(f"{self._where}: {exc}"), **_retry_kw(exc)) from None
        if not 200 <= reply.status < 300:
            raise classify_status(reply, self._where, self._key.note, self._key.redact)
        try:
            data = parse_reply(reply.body)
        except DataError as exc:
            raise TransientModelError(self._key.redact(f"{self._model}: malformed reply: {exc}")) from None
        if not isinstance(data, dict):
            raise TransientModelError(f"{self._model}: malformed reply: not a JSON object")
        return data


def _retry_kw(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, TransientModelError):
        return {"retry_after": exc.retry_after}
    return {}


def _label_logprob(label: str, top: list[tuple[str, float]]) -> float:
    """log P(label) as the first token: the sum over tokens that spell it (" A", "A")."""
    matches = [lp for token, lp in top if token.strip() == label]
    if not matches:
        return -math.inf
    peak = max(matches)
    return peak + math.log(sum(math.exp(lp - peak) for lp in matches))


def _pick_transport(options: OpenAIOptions, base_url: str | None, http_client: Any) -> str:
    if http_client is not None:
        if options.transport == "aiohttp":
            raise ConfigError("the openai backend's option 'transport': 'aiohttp' cannot use an http_client")
        return "sdk"
    if options.transport != "auto":
        return options.transport
    direct = base_url is not None and proxy_for(base_url) is None
    return "aiohttp" if direct else "sdk"


def _route(transport: str, url: str, http_client: Any) -> str | None:
    """The proxy a request to ``url`` goes through on ``transport`` (None: a direct connection).

    aiohttp never reads proxy variables; the sdk transport's own client gets
    exactly :func:`proxy_for`'s choice; a caller's client that trusts the
    environment (httpx's default) proxies loopback too, so it is judged so.
    """
    if transport == "aiohttp":
        return None
    if http_client is None:
        return proxy_for(url)
    return proxy_for(url, exempt_loopback=False) if getattr(http_client, "trust_env", True) else None


def create(spec: ModelSpec, config: ModelConfig) -> OpenAICompatModel:
    """``openai:<model>``; ``config.base_url`` points at any compatible server."""
    if not spec.name:
        raise ConfigError("model spec 'openai' needs a name: openai:<model>")
    return OpenAICompatModel(spec.name, config)
