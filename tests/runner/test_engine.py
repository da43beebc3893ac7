"""Runner behaviour with the scripted model and hand-made requests."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.chat import AnswerMode, Message, Request, Response
from recworld.errors import ModelError
from recworld.models.base import ConnectionFailedError, FatalModelError, TransientModelError
from recworld.models.scripted import ScriptedModel
from recworld.runner import Completion, ResponseCache, Runner, RunnerConfig


def req(text: str, **kwargs: object) -> Request:
    return Request(messages=(Message("user", text),), choices=("A", "B", "C", "D"), **kwargs)  # type: ignore[arg-type]


FAST = RunnerConfig(backoff_base_s=0.001, backoff_max_s=0.01, progress=False)


class FlakyModel:
    """Fails the first ``failures[text]`` calls of each prompt with ``exc``, then answers."""

    def __init__(self, failures: Mapping[str, int], exc: Exception, *, delay_s: float = 0.0) -> None:
        self.failures = dict(failures)
        self.exc = exc
        self.delay_s = delay_s
        self.calls: dict[str, int] = {}

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "flaky", "model": "m"}

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE})

    async def complete(self, request: Request) -> Response:
        text = request.messages[-1].content
        self.calls[text] = self.calls.get(text, 0) + 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.calls[text] <= self.failures.get(text, 0):
            raise self.exc
        return Response(text=f"answer to {text}")

    async def aclose(self) -> None:
        return None


class GaugeModel(FlakyModel):
    """Records the most requests it ever had in flight at once."""

    def __init__(self, delay_s: float) -> None:
        super().__init__({}, RuntimeError("unused"), delay_s=delay_s)
        self.active = 0
        self.peak = 0

    async def complete(self, request: Request) -> Response:
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            return await super().complete(request)
        finally:
            self.active -= 1


def test_map_keeps_order_and_reports_each_result() -> None:
    model = ScriptedModel(lambda r: r.messages[-1].content.upper())
    runner = Runner(model, FAST)
    seen: list[int] = []
    requests = [req(f"q{i}") for i in range(30)]
    results = asyncio.run(runner.map(requests, on_result=lambda i, c: seen.append(i)))
    assert [c.response.text for c in results if c.response] == [f"Q{i}" for i in range(30)]
    assert sorted(seen) == list(range(30))
    assert runner.stats.sent == 30 and runner.stats.errors == 0


@pytest.mark.parametrize("concurrency", [1, 3, 8])
def test_concurrency_is_bounded_and_reached(concurrency: int) -> None:
    model = GaugeModel(delay_s=0.01)
    runner = Runner(model, RunnerConfig(concurrency=concurrency, progress=False))
    asyncio.run(runner.map([req(f"q{i}") for i in range(40)]))
    assert model.peak == concurrency


def test_transient_failures_are_retried_until_success() -> None:
    model = FlakyModel({"a": 2, "b": 0}, TransientModelError("503"))
    runner = Runner(model, FAST)
    a, b = asyncio.run(runner.map([req("a"), req("b")]))
    assert a.response is not None and a.error is None and a.attempts == 3
    assert b.attempts == 1
    assert runner.stats.retries == 2 and runner.stats.sent == 4


def test_exhausted_retries_set_error_and_are_not_cached(tmp_path: Path) -> None:
    model = FlakyModel({"a": 100}, TransientModelError("rate limited", retry_after=0.0))
    cache = ResponseCache(tmp_path / "c.sqlite")
    runner = Runner(model, FAST.model_copy(update={"max_retries": 2}), cache)
    first = asyncio.run(runner.complete(req("a")))
    assert first.response is None and first.attempts == 3
    assert first.error is not None and "rate limited" in first.error
    assert len(cache) == 0
    again = asyncio.run(runner.complete(req("a")))  # a failure is never served from the cache
    assert again.attempts == 3 and model.calls["a"] == 6
    assert runner.stats.errors == 2


def test_a_model_error_is_a_sample_error_and_not_retried() -> None:
    model = FlakyModel({"a": 1}, ModelError("bad request"))
    runner = Runner(model, FAST)
    completion = asyncio.run(runner.complete(req("a")))
    assert completion.attempts == 1 and completion.error == "ModelError: bad request"
    assert not completion.fatal and runner.stats.retries == 0


@pytest.mark.parametrize("bug", [TypeError("unsupported operand"), KeyError("choices"), ValueError("bad")])
def test_a_bug_in_a_backend_propagates_with_its_traceback(bug: Exception) -> None:
    model = FlakyModel({"a": 1}, bug)
    runner = Runner(model, FAST)
    with pytest.raises(type(bug)) as info:
        asyncio.run(runner.complete(req("a")))
    assert info.value is bug and model.calls == {"a": 1}  # raised once, never retried
    assert any(frame.name == "complete" for frame in info.traceback)


def test_a_bug_stops_map_and_cancels_the_rest() -> None:
    model = FlakyModel({"q3": 1}, TypeError("oops"), delay_s=0.01)
    runner = Runner(model, FAST.model_copy(update={"concurrency": 2}))
    seen: list[int] = []
    with pytest.raises(TypeError, match="oops"):
        asyncio.run(runner.map([req(f"q{i}") for i in range(50)], on_result=lambda i, c: seen.append(i)))
    assert 3 not in seen and len(model.calls) < 50  # the bug is not a sample; the rest never ran


def test_a_fatal_error_stops_map_at_once() -> None:
    model = FlakyModel({f"q{i}": 1 for i in range(100)}, FatalModelError("HTTP 401: bad key"), delay_s=0.01)
    runner = Runner(model, FAST.model_copy(update={"concurrency": 4}))
    seen: list[Completion] = []
    with pytest.raises(FatalModelError, match="HTTP 401: bad key"):
        asyncio.run(runner.map([req(f"q{i}") for i in range(100)], on_result=lambda i, c: seen.append(c)))
    assert sum(model.calls.values()) <= 8  # the workers in flight at most, never 100
    assert seen and all(c.fatal and c.error and "401" in c.error for c in seen)
    assert runner.stats.retries == 0
    with pytest.raises(FatalModelError):
        asyncio.run(Runner(FlakyModel({"a": 1}, FatalModelError("403")), FAST).complete(req("a")))


def test_a_server_unreachable_on_every_attempt_is_fatal_once_retries_are_spent() -> None:
    model = FlakyModel({"a": 100}, ConnectionFailedError("connection refused"))
    runner = Runner(model, FAST.model_copy(update={"max_retries": 2}))
    with pytest.raises(FatalModelError, match=r"gave up after 3 attempts.*connection refused"):
        asyncio.run(runner.complete(req("a")))
    assert model.calls["a"] == 3  # retried first: a refused connection is transient


def test_a_server_that_was_reachable_once_is_not_fatal() -> None:
    class Mixed(FlakyModel):
        async def complete(self, request: Request) -> Response:
            n = self.calls.get("a", 0)
            self.exc = TransientModelError("HTTP 503") if n == 1 else ConnectionFailedError("refused")
            return await super().complete(request)

    runner = Runner(Mixed({"a": 100}, RuntimeError("unused")), FAST.model_copy(update={"max_retries": 2}))
    completion = asyncio.run(runner.complete(req("a")))
    assert completion.error is not None and not completion.fatal


def test_timeout_is_a_retryable_failure() -> None:
    class SlowOnce(FlakyModel):
        async def complete(self, request: Request) -> Response:
            self.calls["n"] = self.calls.get("n", 0) + 1
            if self.calls["n"] == 1:
                await asyncio.sleep(10)
            return Response(text="late but fine")

    model = SlowOnce({}, RuntimeError())
    runner = Runner(model, FAST.model_copy(update={"timeout_s": 0.05}))
    completion = asyncio.run(runner.complete(req("a")))
    assert completion.response is not None and completion.attempts == 2


def test_backoff_is_full_jitter_capped_and_honours_retry_after() -> None:
    config = RunnerConfig(backoff_base_s=1.0, backoff_max_s=8.0, progress=False)
    runner = Runner(ScriptedModel(lambda r: "A"), config)
    for attempt in range(1, 8):
        ceiling = min(8.0, 2.0 ** (attempt - 1))
        draws = [runner.backoff_s(attempt) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in draws)
        assert max(draws) > 0.8 * ceiling and min(draws) < 0.2 * ceiling  # full, not equal, jitter
    assert all(runner.backoff_s(1, retry_after=3.0) >= 3.0 for _ in range(50))
    assert runner.backoff_s(1, retry_after=1000.0) == 8.0  # the cap wins


def test_seeded_jitter_repeats() -> None:
    config = RunnerConfig(backoff_base_s=1.0, backoff_max_s=8.0, progress=False, seed=7)
    one = Runner(ScriptedModel(lambda r: "A"), config)
    two = Runner(ScriptedModel(lambda r: "A"), config)
    assert [one.backoff_s(4) for _ in range(10)] == [two.backoff_s(4) for _ in range(10)]
    three = Runner(ScriptedModel(lambda r: "A"), config.model_copy(update={"seed": 8}))
    assert [three.backoff_s(4) for _ in range(10)] != [one.backoff_s(4) for _ in range(10)]


@pytest.mark.parametrize("with_cache", [False, True])
def test_identical_concurrent_requests_are_coalesced(tmp_path: Path, with_cache: bool) -> None:
    model = ScriptedModel(lambda r: "B", delay_s=0.05)
    cache = ResponseCache(tmp_path / "c.sqlite") if with_cache else None
    runner = Runner(model, RunnerConfig(concurrency=16, progress=False), cache)

    async def go() -> list[Completion]:
        return await asyncio.gather(*(runner.complete(req("same")) for _ in range(10)))

    results = asyncio.run(go())
    assert len(model.calls) == 1
    assert all(c.response is not None and c.response.text == "B" for c in results)
    assert sum(not c.cache_hit for c in results) == 1
    assert runner.stats.coalesced == 9 and runner.stats.sent == 1


def test_cancelled_caller_does_not_cancel_the_shared_send() -> None:
    model = ScriptedModel(lambda r: "C", delay_s=0.05)
    runner = Runner(model, FAST)

    async def go() -> Completion:
        first = asyncio.create_task(runner.complete(req("x")))
        await asyncio.sleep(0.01)
        second = asyncio.create_task(runner.complete(req("x")))
        await asyncio.sleep(0.01)
        first.cancel()
        return await second

    result = asyncio.run(go())
    assert result.response is not None and result.response.text == "C"
    assert len(model.calls) == 1


def test_cache_hits_skip_the_model(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    model = ScriptedModel(lambda r: "D")
    requests = [req(f"q{i}") for i in range(5)]
    asyncio.run(Runner(model, FAST, cache).map(requests))
    second = Runner(model, FAST, cache)
    results = asyncio.run(second.map(requests))
    assert len(model.calls) == 5
    assert all(c.cache_hit and c.attempts == 0 for c in results)
    assert second.stats.cache_hits == 5 and second.stats.sent == 0


def test_aclose_closes_the_model() -> None:
    closed: list[bool] = []

    class Closing(ScriptedModel):
        async def aclose(self) -> None:
            closed.append(True)

    async def go() -> None:
        async with Runner(Closing(lambda r: "A"), FAST) as runner:
            await runner.complete(req("a"))

    asyncio.run(go())
    assert closed == [True]


def test_bounded_model_caps_concurrency() -> None:
    """A backend that serves one request at a time is never sent two at once."""
    import asyncio

    from recworld.chat import Message, Request
    from recworld.models.scripted import ScriptedModel
    from recworld.runner import Runner, RunnerConfig

    class OneAtATime(ScriptedModel):
        active = 0
        peak = 0

        @property
        def max_concurrency(self) -> int:
            return 1

        async def complete(self, request: Request):  # type: ignore[no-untyped-def]
            OneAtATime.active += 1
            OneAtATime.peak = max(OneAtATime.peak, OneAtATime.active)
            await asyncio.sleep(0.01)
            OneAtATime.active -= 1
            return await super().complete(request)

    model = OneAtATime(lambda r: "A")
    runner = Runner(model, RunnerConfig(concurrency=8, progress=False))
    requests = [Request(messages=(Message("user", f"q{i}"),), choices=("A", "B")) for i in range(6)]
    results = asyncio.run(runner.map(requests))
    assert all(c.ok for c in results)
    assert OneAtATime.peak == 1


def test_latency_excludes_queueing() -> None:
    """With one slot, the second request waits a full call but its latency is one call."""
    import asyncio

    from recworld.chat import Message, Request
    from recworld.models.scripted import ScriptedModel
    from recworld.runner import Runner, RunnerConfig

    model = ScriptedModel(lambda r: "A", delay_s=0.2)
    runner = Runner(model, RunnerConfig(concurrency=1, progress=False))
    requests = [Request(messages=(Message("user", f"q{i}"),), choices=("A",)) for i in range(3)]
    results = asyncio.run(runner.map(requests))
    assert all(0.19 <= c.latency_s < 0.35 for c in results), [c.latency_s for c in results]


def test_twin_of_a_cancelled_map_send_resends_itself() -> None:
    # map sends inline in its workers; cancelling the map ends that send, and a
    # complete() twin waiting on it must neither hang nor inherit the cancellation.
    model = ScriptedModel(lambda r: "A", delay_s=0.05)
    runner = Runner(model, FAST)

    async def go() -> Completion:
        mapping = asyncio.create_task(runner.map([req("x")]))
        await asyncio.sleep(0.01)
        twin = asyncio.create_task(runner.complete(req("x")))
        await asyncio.sleep(0.01)
        mapping.cancel()
        return await asyncio.wait_for(twin, 2.0)

    result = asyncio.run(go())
    assert result.response is not None and result.response.text == "A"
    assert not result.cache_hit and result.attempts == 1
    assert len(model.calls) == 2 and runner.stats.coalesced == 0


def test_outside_cancel_is_not_a_timeout_and_timeouts_survive_a_new_loop() -> None:
    slow = FlakyModel({}, RuntimeError("unused"), delay_s=0.3)
    runner = Runner(slow, RunnerConfig(timeout_s=0.1, max_retries=0, progress=False))

    async def cancelled_by_caller() -> None:
        task = asyncio.create_task(runner.map([req("y")]))  # map sends inline in this task
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_by_caller())
    for _ in range(2):  # each asyncio.run is a new loop; the shared timer must follow it
        result = asyncio.run(runner.complete(req("z")))
        assert result.error is not None and "timed out after 0.1s" in result.error


def test_map_of_nothing_returns_nothing() -> None:
    runner = Runner(ScriptedModel(lambda r: "A"), FAST)
    assert asyncio.run(runner.map([])) == []


@settings(max_examples=25, deadline=None)
@given(
    n_requests=st.integers(2, 12),
    concurrency=st.integers(1, 6),
    max_retries=st.integers(0, 3),
    delays=st.lists(st.floats(0.0, 0.004), min_size=12, max_size=12),
    seed=st.integers(0, 2**16),
)
def test_a_stopped_run_names_the_failure_that_stopped_it_whatever_the_interleaving(
    n_requests: int, concurrency: int, max_retries: int, delays: list[float], seed: int
) -> None:
    """Invariant: the run's stop reason is the fatal failure itself, never a follow-on request's echo.

    Every request is refused on every attempt; requests retry and back off concurrently, so some
    wake up after another one has already stopped the run (they end "not sent" after attempts of
    their own). Whichever request finishes first, the reason is the one error a stopping request
    records: every attempt spent, then the connection failure.
    """

    class Refused(FlakyModel):
        async def complete(self, request: Request) -> Response:
            text = request.messages[-1].content
            await asyncio.sleep(delays[int(text)])
            return await super().complete(request)

    model = Refused({str(i): 100 for i in range(n_requests)}, ConnectionFailedError("connection refused"))
    config = FAST.model_copy(update={"max_retries": max_retries, "concurrency": concurrency, "seed": seed})
    runner = Runner(model, config)
    with pytest.raises(FatalModelError) as raised:
        asyncio.run(runner.map([req(str(i)) for i in range(n_requests)]))
    reason = f"gave up after {max_retries + 1} attempts: ConnectionFailedError: connection refused"
    assert str(raised.value) == f"the run stopped: {reason}"
    assert runner.stopped == reason
