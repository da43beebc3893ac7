"""``hf:`` specs fail fast when the hub is out of reach and the model is not cached."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from recworld.errors import ModelError
from recworld.models import _hub
from recworld.models._hub import hub_reachable, load_kwargs
from recworld.testing.fake_server import refused_url


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _hub.PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


@pytest.mark.timing
def test_probe_answers_quickly_for_a_dead_endpoint() -> None:
    start = time.monotonic()
    assert hub_reachable(refused_url("")) is False
    assert time.monotonic() - start < 2.5


@pytest.mark.timing
def test_uncached_model_with_unreachable_hub_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", refused_url(""))
    start = time.monotonic()
    with pytest.raises(ModelError, match=r"hf:nobody/no-such-model is not in the local Hugging Face cache"):
        load_kwargs("nobody/no-such-model", "hf")
    assert time.monotonic() - start < 3.0


def test_offline_variable_and_cached_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="HF_HUB_OFFLINE is set"):
        load_kwargs("nobody/no-such-model", "hf-vision")
    monkeypatch.setattr(_hub, "in_cache", lambda repo: repo == "org/cached")
    assert load_kwargs("org/cached", "hf") == {"local_files_only": True}
    assert load_kwargs(str(tmp_path), "hf") == {}  # a local directory never asks the hub


def test_reachable_hub_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_hub, "hub_reachable", lambda endpoint, timeout_s=2.0: True)
    assert load_kwargs("org/anything", "hf") == {}


@pytest.mark.timing
def test_hf_backend_uses_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    transformers = pytest.importorskip("transformers")
    import torch  # noqa: F401

    import recworld.models.hf  # noqa: F401
    from recworld.models import ModelConfig, load_model

    # Imported before the clock starts: the bound is on the hub check, not on a cold import.
    assert transformers.AutoTokenizer and transformers.AutoModelForCausalLM

    monkeypatch.setenv("HF_ENDPOINT", refused_url(""))
    start = time.monotonic()
    with pytest.raises(ModelError, match="not in the local Hugging Face cache"):
        load_model("hf:nobody/no-such-model", ModelConfig(options={"device": "cpu"}))
    assert time.monotonic() - start < 5.0
