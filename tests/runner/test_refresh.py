"""``Runner.complete(request, refresh=True)``: past the cache read, on the runner's own road.

A refreshed request is sent under the same concurrency bound as every other request
of the runner (a model that serves one request at once never sees two), is counted in
the runner's stats, and its reply replaces the cached one. The model double counts
its own calls and the calls it has in flight; nothing here reads the runner's code
paths to decide what should have happened.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.chat import Message, Request, Response
from recworld.models.base import ModelBase
from recworld.runner import Completion, ResponseCache, RunnerConfig, RunnerStats, cache_key, open_runner

PROMPTS = ("a", "b", "c")
STALE = "stale"


class OneAtATime(ModelBase):
    """Serves one request at once (``max_concurrency`` 1); answers ``prompt#n`` for its n-th send of it."""

    def __init__(self) -> None:
        self._identity = {"backend": "one-at-a-time", "model": "m"}
        self.in_flight = 0
        self.peak = 0
        self.sends: dict[str, int] = {}
        self.pauses: list[int] = []  # yields per call, consumed in call order (hypothesis draws them)

    @property
    def max_concurrency(self) -> int | None:
        return 1

    async def complete(self, request: Request) -> Response:
        prompt = request.messages[-1].content
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            self.sends[prompt] = self.sends.get(prompt, 0) + 1
            answer = f"{prompt}#{self.sends[prompt]}"
            for _ in range(self.pauses.pop(0) if self.pauses else 0):
                await asyncio.sleep(0)
            return Response(text=answer)
        finally:
            self.in_flight -= 1


@dataclass(frozen=True)
class Ask:
    prompt: str
    refresh: bool
    wait: int  # yields before it is asked


def _request(prompt: str) -> Request:
    return Request(messages=(Message("user", prompt),), max_tokens=8)


def _version(text: str | None) -> int:
    """``n`` of ``prompt#n``; 0 for the stale seed and for nothing cached."""
    return 0 if text is None or text == STALE else int(text.rsplit("#", 1)[1])


asks = st.lists(
    st.builds(Ask, st.sampled_from(PROMPTS), st.booleans(), st.integers(0, 6)), min_size=1, max_size=12
)


@settings(max_examples=60, deadline=None)
@given(
    asks=asks,
    seeded=st.sets(st.sampled_from(PROMPTS)),
    pauses=st.lists(st.integers(0, 4), max_size=12),
    concurrency=st.integers(1, 8),
)
def test_refreshed_and_cached_requests_share_one_bound_one_count_and_one_cache(
    asks: list[Ask], seeded: set[str], pauses: list[int], concurrency: int
) -> None:
    model = OneAtATime()
    model.pauses = list(pauses)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cache.sqlite"
        with ResponseCache(path) as seed:  # rejected replies a previous run cached
            for prompt in seeded:
                seed.put(cache_key(model.identity, _request(prompt)), Response(text=STALE))
        outcome = asyncio.run(_run(model, path, asks, concurrency))
        with ResponseCache(path) as cache:
            final = {p: cache.get(cache_key(model.identity, _request(p))) for p in PROMPTS}
    completions, cached_at_ask, stats = outcome

    assert model.peak <= 1  # the model's own cap held for refreshed and cached requests alike
    assert stats.sent == sum(model.sends.values())  # every send the model saw is counted
    assert stats.requests == len(asks) == stats.cache_hits + stats.coalesced + stats.sent
    for ask, completion, before in zip(asks, completions, cached_at_ask, strict=True):
        assert completion.response is not None
        if ask.refresh:  # never the reply the cache held when it was asked: a newer one
            assert _version(completion.response.text) > _version(before)
    for prompt in PROMPTS:
        sent = model.sends.get(prompt, 0)
        expected = f"{prompt}#{sent}" if sent else (STALE if prompt in seeded else None)
        # The cache holds the newest answer the model gave (a refreshed one replaced the stale row).
        assert (final[prompt].text if final[prompt] is not None else None) == expected


async def _run(
    model: OneAtATime, path: Path, asks: list[Ask], concurrency: int
) -> tuple[list[Completion], list[str | None], RunnerStats]:
    config = RunnerConfig(progress=False, max_retries=0, concurrency=concurrency)
    cached_at_ask: list[str | None] = [None] * len(asks)
    async with open_runner(model, config, path, owned=False) as runner:
        assert runner.cache is not None
        cache = runner.cache

        async def one(index: int, ask: Ask) -> Completion:
            for _ in range(ask.wait):
                await asyncio.sleep(0)
            held = cache.get(cache_key(model.identity, _request(ask.prompt)))
            cached_at_ask[index] = None if held is None else held.text
            return await runner.complete(_request(ask.prompt), refresh=ask.refresh)

        completions = await asyncio.gather(*(one(i, a) for i, a in enumerate(asks)))
    return list(completions), cached_at_ask, runner.stats


def test_a_refresh_is_stored_over_the_cached_reply_and_read_back_by_the_next_plain_request(
    tmp_path: Path,
) -> None:
    model = OneAtATime()
    request = _request("a")

    async def go() -> tuple[list[str | None], Mapping[str, int]]:
        async with open_runner(model, RunnerConfig(progress=False), tmp_path / "c.sqlite", owned=False) as r:
            texts = [
                (await r.complete(request)).response.text,  # type: ignore[union-attr]
                (await r.complete(request)).response.text,  # type: ignore[union-attr]
                (await r.complete(request, refresh=True)).response.text,  # type: ignore[union-attr]
                (await r.complete(request)).response.text,  # type: ignore[union-attr]
            ]
            return texts, {"sent": r.stats.sent, "hits": r.stats.cache_hits}

    texts, counts = asyncio.run(go())
    assert texts == ["a#1", "a#1", "a#2", "a#2"]
    assert counts == {"sent": 2, "hits": 2} and model.sends == {"a": 2}
