"""``openai:<model>`` as an embedder: any OpenAI-compatible ``POST /embeddings`` endpoint.

The same rules as the chat backend (:mod:`recworld.models.openai_compat`), by
using the same parts rather than copies of them:

* keys: :func:`~recworld.models._keys.choose_key`: sent only to ``base_url``,
  over plain ``http://`` only to a loopback host (``localhost``,
  ``127.0.0.0/8``, ``::1``, ``*.localhost``) unless ``allow_insecure_http``;
  otherwise withheld (the placeholder goes instead and a 401 says why);
* transports: :mod:`recworld.models._transport` (aiohttp for a ``base_url``
  without a proxy variable, else the openai SDK), bounded replies, no redirects;
* errors: :func:`~recworld.models._replies.classify_status`: 401/403/404
  are fatal, 408/409/425/429/5xx and malformed replies transient, any other
  4xx a :class:`~recworld.errors.ModelError`; the runner owns retries.

Options (:class:`~recworld.models.options.OpenAIEmbedOptions`): the chat
backend's transport settings, ``batch_size`` (texts per request, default 128)
and ``dimensions`` (sent when set).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from recworld.errors import ConfigError, DataError, ModelError
from recworld.io import parse_json
from recworld.models._keys import KeyChoice, choose_key, proxy_for
from recworld.models._replies import classify_status
from recworld.models._transport import AiohttpTransport, SDKTransport
from recworld.models.base import TransientModelError
from recworld.models.embedding import EmbedderBase, Vectors
from recworld.models.openai_compat import DEFAULT_BASE_URL
from recworld.models.options import OpenAIEmbedOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec


def _transport_of(options: OpenAIEmbedOptions, base_url: str | None) -> str:
    """The chat backend's rule: a server we were pointed at, reached without a proxy, gets aiohttp."""
    if options.transport != "auto":
        return options.transport
    return "aiohttp" if base_url is not None and proxy_for(base_url) is None else "sdk"


def _open_transport(
    options: OpenAIEmbedOptions, transport: str, url: str, key: KeyChoice, proxy: str | None
) -> AiohttpTransport | SDKTransport:
    headers = {"Authorization": f"Bearer {key.token}"}
    if transport == "aiohttp":
        return AiohttpTransport(
            url,
            headers,
            max_connections=options.max_connections,
            max_response_bytes=options.max_response_bytes,
            connect_timeout_s=options.connect_timeout_s,
            redact=key.redact,
        )
    return SDKTransport(
        url,
        headers,
        http_client=None,
        max_response_bytes=options.max_response_bytes,
        proxy=proxy,
        redact=key.redact,
    )


class OpenAIEmbedder(EmbedderBase):
    """An OpenAI-compatible embeddings endpoint behind the Embedder protocol."""

    def __init__(self, model: str, config: ModelConfig) -> None:
        options = parse_options(OpenAIEmbedOptions, config.options, "openai")
        self._model = model
        self._url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        transport = _transport_of(options, config.base_url)
        proxy = proxy_for(self._url) if transport == "sdk" else None  # aiohttp never reads proxy variables
        self._key = choose_key(
            model,
            config.base_url,
            DEFAULT_BASE_URL,
            config.api_key_env,
            config.allow_insecure_http,
            proxy=proxy,
        )
        self._where = f"openai:{model} embeddings at {self._url}"
        self._dimensions = options.dimensions
        self.max_batch = options.batch_size
        self._identity = {"backend": "openai", "model": model, "base_url": self._url}
        if options.dimensions is not None:
            self._identity["dimensions"] = str(options.dimensions)
        self._http = _open_transport(options, transport, self._url, self._key, proxy)

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self._model!r}, base_url={self._url!r})"

    async def embed(self, texts: Sequence[str]) -> Vectors:
        args: dict[str, Any] = {"model": self._model, "input": list(texts), "encoding_format": "float"}
        if self._dimensions is not None:
            args["dimensions"] = self._dimensions
        try:
            reply = await self._http.post("/embeddings", args)
        except (TransientModelError, ModelError) as exc:
            retry = {"retry_after": exc.retry_after} if isinstance(exc, TransientModelError) else {}
            raise type(exc)(self._redact(f"{self._where}: {exc}"), **retry) from None
        if not 200 <= reply.status < 300:
            raise classify_status(reply, self._where, self._key.note, self._redact)
        return self._vectors(reply.body, len(texts))

    def _vectors(self, body: bytes, n: int) -> Vectors:
        """The reply's vectors in input order; a reply that is not n equal-length finite rows is transient."""
        try:
            data = parse_json(body)["data"]  # depth- and size-guarded, as every reply
            rows = sorted(data, key=lambda d: int(d["index"]))
            vectors = [[float(x) for x in row["embedding"]] for row in rows]
        except (DataError, ValueError, LookupError, TypeError, OverflowError) as exc:
            raise TransientModelError(f"{self._where}: malformed reply: {type(exc).__name__}") from None
        dims = {len(v) for v in vectors}
        if len(vectors) != n or len(dims) != 1 or 0 in dims:
            raise TransientModelError(
                f"{self._where}: asked {n} texts, got {len(vectors)} vectors of sizes {dims}"
            )
        if not all(math.isfinite(x) for v in vectors for x in v):
            raise TransientModelError(f"{self._where}: the reply holds a non-finite number")
        return np.asarray(vectors, dtype=np.float32)

    def _redact(self, text: str) -> str:
        return self._key.redact(text)

    async def aclose(self) -> None:
        await self._http.aclose()


def create(spec: ModelSpec, config: ModelConfig) -> OpenAIEmbedder:
    """``openai:<model>``; ``config.base_url`` points at any compatible server."""
    if not spec.name:
        raise ConfigError("embedder spec 'openai' needs a name: openai:<model>")
    return OpenAIEmbedder(spec.name, config)
