"""The describe-images tests' fake vision server, a fixture for every module here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from helpers.multimodal import FakeVLM


@pytest.fixture
def fake_vlm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeVLM]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    fake = FakeVLM()
    with fake.loopback:
        yield fake
