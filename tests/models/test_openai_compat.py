"""The OpenAI-compatible backend against in-process fake servers.

Every behaviour test runs on both transports: ``sdk`` (the openai SDK over an
httpx mock transport) and ``aiohttp`` (against a real loopback server that
hands each request to the same handler).
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
from pathlib import Path
from typing import Any

import pytest

from helpers.openai_fakes import (
    KEY,
    Handler,
    completion,
    fake_server_model,
    httpx,
)
from recworld.errors import ConfigError, ModelError
from recworld.models import AnswerMode, Message, ModelConfig, Request, TransientModelError
from recworld.models.base import FatalModelError
from recworld.models.openai_compat import OpenAICompatModel


@pytest.fixture(params=["sdk", "aiohttp"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> ModelConfig:
    monkeypatch.setenv("TEST_OPENAI_KEY", KEY)
    return ModelConfig(base_url="https://fake/v1", api_key_env="TEST_OPENAI_KEY", seed=3)


def run(model: OpenAICompatModel, request: Request) -> Any:
    return asyncio.run(model.complete(request))


def test_generate_sends_the_request_fields(keyed: ModelConfig, tmp_path: Path, transport: str) -> None:
    image = tmp_path / "poster.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n fake")
    seen: list[Any] = []
    model = fake_server_model(keyed, seen=seen, transport=transport)
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    request = Request(
        (Message("system", "sys"), Message("user", "hi", images=(str(image),))),
        max_tokens=0,
        stop=("\n",),
        json_schema=schema,
        seed=11,
    )
    response = run(model, request)
    assert response.text == "echo:hi"
    assert response.usage.prompt_tokens == 7
    body = json.loads(seen[0].content)
    assert body["model"] == "m" and body["temperature"] == 0.0
    assert body["seed"] == 11  # the request's seed, not ModelConfig.seed
    assert body["max_tokens"] == 1  # never 0
    assert body["stop"] == ["\n"]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == schema
    parts = body["messages"][1]["content"]
    assert parts[0] == {"type": "text", "text": "hi"}
    url = parts[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == b"\x89PNG\r\n\x1a\n fake"
    assert seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert seen[0].url.path == "/v1/chat/completions"


def test_loglik_reads_top_logprobs(keyed: ModelConfig, transport: str) -> None:
    seen: list[Any] = []
    model = fake_server_model(keyed, seen=seen, transport=transport)
    response = run(model, Request((Message("user", "q"),), mode=AnswerMode.LOGLIK, choices=("A", "B", "D")))
    body = json.loads(seen[0].content)
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 20
    a, b, d = response.choice_logprobs
    assert a == pytest.approx(math.log(math.exp(-0.5) + math.exp(-1.0)))  # "A" and " A" both spell A
    assert b == pytest.approx(-1.5)
    assert d == -math.inf  # outside the top 20
    assert response.text == "A"


def status_handler(status: int, headers: dict[str, str] | None = None, message: str = "nope") -> Handler:
    def handler(request: Any) -> Any:
        return httpx.Response(status, headers=headers or {}, json={"error": {"message": message}})

    return handler


def test_rate_limit_is_transient_with_retry_after_and_sdk_retries_are_off(
    keyed: ModelConfig, transport: str
) -> None:
    seen: list[Any] = []
    model = fake_server_model(keyed, status_handler(429, {"retry-after": "3"}), seen, transport)
    with pytest.raises(TransientModelError) as info:
        run(model, Request((Message("user", "q"),)))
    assert info.value.retry_after == 3.0
    assert len(seen) == 1


@pytest.mark.parametrize(("status", "kind"), [(500, TransientModelError), (503, TransientModelError)])
def test_server_errors_are_transient(
    keyed: ModelConfig, status: int, kind: type[Exception], transport: str
) -> None:
    with pytest.raises(kind):
        run(
            fake_server_model(keyed, status_handler(status), transport=transport),
            Request((Message("user", "q"),)),
        )


@pytest.mark.parametrize(
    ("status", "cause"),
    [(401, "rejected the API key"), (403, "permission denied"), (404, "model not found")],
)
def test_auth_permission_and_missing_model_are_fatal_one_liners_without_the_key(
    keyed: ModelConfig, transport: str, status: int, cause: str
) -> None:
    seen: list[Any] = []
    handler = status_handler(status, message=f"Incorrect API key provided: {KEY}\nsee docs")
    model = fake_server_model(keyed, handler, seen, transport)
    with pytest.raises(FatalModelError) as info:
        run(model, Request((Message("user", "q"),)))
    text = str(info.value)
    assert cause in text and f"HTTP {status}" in text
    assert dict(model.identity)["base_url"] in text  # names where it went
    assert KEY not in text and "\n" not in text
    assert info.value.__cause__ is None  # the SDK error (with request headers) is not chained
    assert len(seen) == 1
    assert KEY not in repr(model) and KEY not in json.dumps(dict(model.identity))


def test_other_client_errors_are_sample_errors(keyed: ModelConfig, transport: str) -> None:
    model = fake_server_model(keyed, status_handler(400, message="bad request"), transport=transport)
    with pytest.raises(ModelError) as info:
        run(model, Request((Message("user", "q"),)))
    assert not isinstance(info.value, FatalModelError) and "HTTP 400: bad request" in str(info.value)


def test_unavailable_honours_retry_after(keyed: ModelConfig, transport: str) -> None:
    model = fake_server_model(keyed, status_handler(503, {"retry-after": "2"}), transport=transport)
    with pytest.raises(TransientModelError) as info:
        run(model, Request((Message("user", "q"),)))
    assert info.value.retry_after == 2.0


def test_dropped_connections_and_malformed_replies_are_transient(keyed: ModelConfig, transport: str) -> None:
    def hang_up(request: Any) -> Any:
        raise httpx.ConnectError("refused", request=request)

    def garbage(request: Any) -> Any:
        return httpx.Response(200, content=b"{not json", headers={"content-type": "application/json"})

    def empty(request: Any) -> Any:
        return httpx.Response(200, json={**completion("x"), "choices": []})

    for handler in (hang_up, garbage, empty):
        with pytest.raises(TransientModelError):
            run(fake_server_model(keyed, handler, transport=transport), Request((Message("user", "q"),)))


def test_oversized_reply_is_refused(keyed: ModelConfig, transport: str) -> None:
    def huge(request: Any) -> Any:
        return httpx.Response(200, json=completion("x" * 5000))

    config = keyed.model_copy(update={"options": {"max_response_bytes": 2048}})
    model = fake_server_model(config, huge, transport=transport)
    with pytest.raises(ModelError, match="larger than 2048 bytes"):
        run(model, Request((Message("user", "q"),)))


def test_keys_and_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY"):
        OpenAICompatModel("m", ModelConfig(api_key_env="NO_SUCH_KEY"))
    seen: list[Any] = []
    local = fake_server_model(
        ModelConfig(base_url="http://local:8000/v1", api_key_env="NO_SUCH_KEY"), seen=seen
    )
    run(local, Request((Message("user", "q"),)))
    assert seen[0].headers["authorization"] == "Bearer EMPTY"
    assert dict(local.identity) == {"backend": "openai", "model": "m", "base_url": "http://local:8000/v1"}


def test_unreadable_image_names_the_file(keyed: ModelConfig, tmp_path: Path, transport: str) -> None:
    missing = tmp_path / "gone.jpg"
    with pytest.raises(ConfigError, match=r"gone\.jpg"):
        run(
            fake_server_model(keyed, transport=transport),
            Request((Message("user", "q", images=(str(missing),)),)),
        )
