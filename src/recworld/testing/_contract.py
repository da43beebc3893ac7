""":class:`ModelContract` and :class:`EmbedderContract`: what every backend must do, as pytest tests.

Each check would fail for a backend that only looks right: one that answers
every prompt with ``""``, declares a mode it cannot serve (or serves one it
does not declare), returns scores that do not pick its own answer, answers
differently when asked concurrently, puts a secret or a local path in its
cache identity, or returns something the response cache cannot hold.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from recworld.capped import is_remote
from recworld.chat import AnswerMode, Message, Request, Response
from recworld.errors import RecWorldError
from recworld.models.base import Model, context_window, max_concurrency, token_counter
from recworld.models.embedding import Embedder
from recworld.runner import RunnerConfig, open_embedding_runner, open_runner

# A key-shaped string: set it as your backend's key in the ``model`` fixture, and
# test_identity_is_stable_and_has_no_secrets checks it never reaches the identity or repr.
SECRET = "sk-contract-test-secret-0123456789"

PROMPT = (
    Message("system", "you are a helpful assistant"),
    Message("user", "which genre fits the movie best\nA comedy\nB drama\nC horror\nD animation"),
)

QUIET = RunnerConfig(progress=False, max_retries=0, timeout_s=600)


def _ask(model: Model, request: Request) -> Response:
    return asyncio.run(model.complete(request))


def _check_identity(identity: Mapping[str, str], shown: str, secret: str) -> None:
    data = dict(identity)
    assert data.get("backend"), "the identity names its backend"
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()), data
    dumped = json.dumps(data, sort_keys=True) + shown
    assert secret not in dumped, "a key reached the identity or repr"
    local = [v for v in data.values() if os.path.isabs(v) and not is_remote(v)]
    assert not local, f"the identity holds local paths {local}: it must name a model, not a machine"


class ModelContract:
    """Checks every chat backend passes. Subclasses provide a ``model`` fixture.

    Override :meth:`make_request` when the model needs more than a prompt (the
    classic baselines read ``Request.question``), ``choices`` and
    ``option_texts`` when its labels differ, and ``secret`` to the key your
    fixture configured.
    """

    # Loglik labels and rank texts asked in every check.
    choices: tuple[str, ...] = ("A", "B", "C", "D")
    option_texts: tuple[str, ...] = ("comedy", "drama", "horror", "animation")
    secret: str = SECRET
    # The registry backends a subclass exercises (RecWorld's coverage test reads it).
    backends: tuple[str, ...] = ()

    def make_request(self, mode: AnswerMode, k: int = 0) -> Request:
        """A request in ``mode``; ``k`` varies the prompt so requests differ."""
        choices = self.option_texts if mode is AnswerMode.RANK else self.choices
        text = f"{PROMPT[1].content} {k}"
        return Request((PROMPT[0], Message("user", text)), mode=mode, choices=choices, max_tokens=4)

    def test_identity_is_stable_and_has_no_secrets(self, model: Model) -> None:
        assert dict(model.identity) == dict(model.identity)
        _check_identity(model.identity, repr(model), self.secret)

    def test_declared_modes_are_served_and_others_refused(self, model: Model) -> None:
        declared = model.supports
        assert declared and all(isinstance(m, AnswerMode) for m in declared), declared
        for mode in AnswerMode:
            request = self.make_request(mode)
            if mode in declared:
                self.check_answer(request, _ask(model, request))
                continue
            try:
                response = _ask(model, request)
            except RecWorldError:
                continue
            raise AssertionError(f"{mode.value} is not declared but was answered: {response}")

    def check_answer(self, request: Request, response: Response) -> None:
        """What a response to ``request`` must look like in its mode."""
        usage = response.usage
        assert usage.prompt_tokens >= 0 and usage.completion_tokens >= 0, usage
        if request.mode is AnswerMode.GENERATE:
            assert isinstance(response.text, str) and response.text.strip(), f"empty answer {response!r}"
            return
        scores = response.choice_logprobs
        assert scores is not None and len(scores) == len(request.choices), response
        assert all(isinstance(x, float) and math.isfinite(x) and x <= 1e-9 for x in scores), scores
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        assert response.text == request.choices[best], "the text is not the best-scored choice"

    def test_generate_returns_the_same_text_for_the_same_greedy_request(self, model: Model) -> None:
        if AnswerMode.GENERATE not in model.supports:
            import pytest

            pytest.skip("generate not supported")
        request = self.make_request(AnswerMode.GENERATE)
        first, second = _ask(model, request), _ask(model, request)
        self.check_answer(request, first)
        assert first.text == second.text, "temperature 0 must be deterministic"

    def test_concurrent_calls_match_sequential_ones(self, model: Model) -> None:
        import pytest

        modes = [m for m in AnswerMode if m in model.supports]
        requests = [self.make_request(modes[k % len(modes)], k) for k in range(2 * len(modes))]

        async def together() -> list[Response]:
            return list(await asyncio.gather(*(model.complete(r) for r in requests)))

        parallel = asyncio.run(together())
        for request, a in zip(requests, parallel, strict=True):
            b = _ask(model, request)
            assert a.text == b.text
            if a.choice_logprobs is not None:
                assert a.choice_logprobs == pytest.approx(b.choice_logprobs, abs=1e-6)

    def test_answers_survive_the_response_cache(self, model: Model, tmp_path: Path) -> None:
        """Through the Runner twice: the second pass sends nothing and reads back the same answers."""
        requests = [self.make_request(m, 7) for m in AnswerMode if m in model.supports]

        path = tmp_path / "contract.sqlite"

        async def twice() -> tuple[list[Response | None], list[Response | None], int]:
            # owned=False: the fixture owns the model.
            async with open_runner(model, QUIET, path, owned=False) as first:
                one = [c.response for c in await first.map(requests)]
            async with open_runner(model, QUIET, path, owned=False) as second:
                two = [c.response for c in await second.map(requests)]
            return one, two, second.stats.sent

        one, two, sent = asyncio.run(twice())
        assert sent == 0 and all(r is not None for r in one), one
        assert [r.to_json() for r in one if r] == [r.to_json() for r in two if r]

    def test_capabilities_are_well_formed(self, model: Model) -> None:
        bound, window, count = max_concurrency(model), context_window(model), token_counter(model)
        assert bound is None or bound >= 1, bound
        assert window is None or window > 0, window
        if count is not None:
            short, long = count("which genre"), count("which genre fits the movie best")
            assert 0 < short < long, (short, long)


class EmbedderContract:
    """Checks every embedder passes. Subclasses provide an ``embedder`` fixture."""

    texts: tuple[str, ...] = (
        "the user watched toy story then heat",
        "comedy drama horror animation",
        "the user watched heat then casino",
    )
    secret: str = SECRET
    backends: tuple[str, ...] = ()

    def embed(self, embedder: Embedder, texts: Sequence[str]) -> Any:
        return asyncio.run(embedder.embed(list(texts)))

    def test_identity_is_stable_and_has_no_secrets(self, embedder: Embedder) -> None:
        assert dict(embedder.identity) == dict(embedder.identity)
        _check_identity(embedder.identity, repr(embedder), self.secret)

    def test_one_finite_row_per_text_in_order(self, embedder: Embedder) -> None:
        vectors = np.asarray(self.embed(embedder, self.texts))
        assert vectors.ndim == 2 and vectors.shape[0] == len(self.texts) and vectors.shape[1] > 0
        assert np.isfinite(vectors).all()
        reversed_rows = np.asarray(self.embed(embedder, self.texts[::-1]))
        np.testing.assert_allclose(reversed_rows, vectors[::-1], rtol=1e-4, atol=1e-5)
        single = np.asarray(self.embed(embedder, self.texts[:1]))
        np.testing.assert_allclose(single[0], vectors[0], rtol=1e-4, atol=1e-5)
        assert not np.allclose(vectors[0], vectors[1]), "different texts got the same vector"

    def test_vectors_survive_the_cache(self, embedder: Embedder, tmp_path: Path) -> None:
        path = tmp_path / "contract.sqlite"

        async def twice() -> tuple[Any, Any, int]:
            async with open_embedding_runner(embedder, QUIET, path, owned=False) as first:
                one = await first.embed(self.texts)
            async with open_embedding_runner(embedder, QUIET, path, owned=False) as second:
                two = await second.embed(self.texts)
            return one, two, second.stats.sent

        one, two, sent = asyncio.run(twice())
        assert sent == 0
        np.testing.assert_array_equal(one, two)
        np.testing.assert_allclose(np.linalg.norm(one, axis=1), 1.0, rtol=1e-5)
