"""The describe-images tests' fake vision server (the one fake server, mode ``vision``), for all."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from recworld.testing.fake_server import FakeOpenAIServer


@pytest.fixture
def fake_vlm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer("vision") as fake:  # answers "image SHA256" of the image it was sent
        yield fake
