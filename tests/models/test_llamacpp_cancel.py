"""A timed-out llama.cpp call stops its thread and frees the lock (a fake Llama, no weights).

The fake decodes one token per 10 ms and asks its stopping criteria after each,
as llama-cpp-python's ``create_completion`` does.
"""

from __future__ import annotations

import asyncio
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

from recworld.models import AnswerMode, Message, ModelConfig, Request
from recworld.models.llamacpp import LlamaCppModel

TOKEN_S = 0.01
ASK = (Message("user", "the user watched toy story"),)


class StoppingCriteriaList(list):  # type: ignore[type-arg]
    def __call__(self, input_ids: Any, logits: Any) -> bool:
        return any(criterion(input_ids, logits) for criterion in self)


class FakeLlama:
    def __init__(self, **kwargs: Any) -> None:
        self.metadata: dict[str, str] = {}
        self.generated: list[int] = []  # tokens produced per create_completion call
        self.n_batch = 512

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        return [1 + len(word) for word in text.split()]

    def reset(self) -> None:
        return None

    def create_completion(
        self, *, prompt: list[int], max_tokens: int, stopping_criteria: Any, **_: Any
    ) -> Any:
        made = 0
        for _ in range(max_tokens):
            time.sleep(TOKEN_S)
            made += 1
            if stopping_criteria is not None and stopping_criteria(prompt, None):
                break
        self.generated.append(made)
        return {
            "choices": [{"text": "x" * made}],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": made},
        }

    def close(self) -> None:
        return None


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LlamaCppModel:
    fake = types.ModuleType("llama_cpp")
    fake.Llama = FakeLlama  # type: ignore[attr-defined]
    fake.StoppingCriteriaList = StoppingCriteriaList  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", fake)
    path = tmp_path / "fake.gguf"
    path.write_bytes(b"GGUF fake weights")
    return LlamaCppModel(path, ModelConfig(n_ctx=100_000))


@pytest.mark.timing
def test_a_timed_out_generation_stops_and_frees_the_lock(model: LlamaCppModel) -> None:
    llm: FakeLlama = model._llm

    async def timeout_then_ask() -> tuple[str, float]:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(model.complete(Request(ASK, max_tokens=10_000)), 0.2)
        start = time.monotonic()
        response = await asyncio.wait_for(model.complete(Request(ASK, max_tokens=3)), 5)
        return response.text, time.monotonic() - start

    text, waited = asyncio.run(timeout_then_ask())
    assert text == "xxx"
    assert llm.generated[0] < 200  # stopped within a few tokens of the timeout, not after 10,000
    assert waited < 2.0  # the lock was free again at once


def test_a_call_cancelled_while_queued_never_starts(model: LlamaCppModel) -> None:
    llm: FakeLlama = model._llm

    async def queued_then_cancelled() -> None:
        long = asyncio.ensure_future(model.complete(Request(ASK, max_tokens=30)))
        await asyncio.sleep(0.05)  # the long call holds the lock
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(model.complete(Request(ASK, max_tokens=5)), 0.05)
        await long
        await asyncio.sleep(0.1)  # give the queued thread time to take the lock

    asyncio.run(queued_then_cancelled())
    assert llm.generated == [30]


def test_the_request_seed_reaches_llama_cpp(model: LlamaCppModel, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    original = model._llm.create_completion

    def record(**kwargs: Any) -> Any:
        seen.update(kwargs)
        return original(**kwargs)

    monkeypatch.setattr(model._llm, "create_completion", record)
    asyncio.run(model.complete(Request(ASK, max_tokens=1, temperature=0.8, seed=41)))
    assert seen["seed"] == 41


def test_loglik_is_not_started_after_a_cancel(model: LlamaCppModel) -> None:
    import threading

    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Exception, match="cancelled"):
        model._locked(model._loglik, Request(ASK, mode=AnswerMode.LOGLIK, choices=("A",)), cancel)
