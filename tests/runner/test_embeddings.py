"""The embedding road: one cache entry per text, the chat key recipe, batching, coalescing, failures."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from helpers.runner_fakes import vector_for
from recworld.chat import EmbeddingRequest, Message, Request
from recworld.errors import ConfigError, ModelError
from recworld.models import FatalModelError, ModelConfig, TransientModelError, load_embedder, load_model
from recworld.models.embedding import EmbedderBase, Vectors
from recworld.models.scripted import ScriptedEmbedder, bag_of_words
from recworld.runner import BlockingEmbedder, EmbeddingRunner, ResponseCache, RunnerConfig, cache_key
from recworld.testing.fake_server import FakeOpenAIServer

FAST = RunnerConfig(progress=False, backoff_base_s=0.0, max_retries=3, timeout_s=10)


def unit(rows: Vectors) -> Vectors:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out: Vectors = rows / norms
    return out


def test_each_text_is_embedded_once_across_calls_and_batches(tmp_path: Path) -> None:
    embedder = ScriptedEmbedder()
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        runner = EmbeddingRunner(embedder, FAST, cache, batch=2)
        first = asyncio.run(runner.embed(["red apple", "green pear", "red apple", "blue plum"]))
        assert embedder.calls == [["red apple", "green pear"], ["blue plum"]]  # duplicates sent once
        second = asyncio.run(runner.embed(["blue plum", "yellow fig", "red apple"]))
        assert embedder.calls[2:] == [["yellow fig"]]
        assert (runner.stats.requests, runner.stats.sent, runner.stats.cache_hits) == (7, 3, 2)
    expected = unit(bag_of_words(["red apple", "green pear", "red apple", "blue plum"]))
    np.testing.assert_allclose(first, expected, rtol=1e-6)
    np.testing.assert_allclose(
        second, unit(bag_of_words(["blue plum", "yellow fig", "red apple"])), rtol=1e-6
    )
    assert first[0] @ first[2] == pytest.approx(1.0) and abs(first[0] @ first[1]) < 1.0


def test_vectors_are_keyed_like_chat_requests_and_never_share_a_chat_key(tmp_path: Path) -> None:
    embedder = ScriptedEmbedder()
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        raw = asyncio.run(EmbeddingRunner(embedder, FAST, cache).embed(["hello world"], normalised=False))
        key = cache_key(embedder.identity, EmbeddingRequest("hello world"))
        assert cache.get_json(key) is not None
        chat = Request(messages=(Message("user", "hello world"),))
        assert cache_key(embedder.identity, chat) != key
    np.testing.assert_array_equal(raw, bag_of_words(["hello world"]))


class SlowEmbedder(EmbedderBase):
    """Counts every text it embeds; fails as planned per call."""

    def __init__(self, failures: Sequence[Exception] = (), delay_s: float = 0.05) -> None:
        self._identity = {"backend": "slow", "model": "bag"}
        self.failures = list(failures)
        self.delay_s = delay_s
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        await asyncio.sleep(self.delay_s)
        if self.failures:
            raise self.failures.pop(0)
        self.texts.extend(texts)
        return bag_of_words(texts)


def test_concurrent_calls_share_texts_in_flight() -> None:
    embedder = SlowEmbedder()
    runner = EmbeddingRunner(embedder, FAST)

    async def both() -> tuple[Vectors, Vectors]:
        one = runner.embed(["a b", "c d", "e f"])
        two = runner.embed(["c d", "e f", "g h"])
        return await asyncio.gather(one, two)

    one, two = asyncio.run(both())
    assert sorted(embedder.texts) == ["a b", "c d", "e f", "g h"]  # each sent once
    assert runner.stats.coalesced == 2
    np.testing.assert_allclose(one[1:], two[:2])


def test_transient_failures_are_retried_and_model_errors_are_raised(tmp_path: Path) -> None:
    flaky = SlowEmbedder([TransientModelError("503"), TransientModelError("503")], delay_s=0)
    runner = EmbeddingRunner(flaky, FAST)
    vectors = asyncio.run(runner.embed(["x y"]))
    assert runner.stats.retries == 2 and runner.stats.sent == 3 and vectors.shape == (1, 64)
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        refusing = SlowEmbedder([ModelError("input too long")], delay_s=0)
        with pytest.raises(ModelError, match="embedding 1 of 1 texts failed: ModelError: input too long"):
            asyncio.run(EmbeddingRunner(refusing, FAST, cache).embed(["x y"]))
        assert len(cache) == 0  # nothing is cached for a failure
        assert asyncio.run(EmbeddingRunner(refusing, FAST, cache).embed(["x y"])).shape == (1, 64)


def test_a_fatal_error_stops_the_runner() -> None:
    embedder = SlowEmbedder([FatalModelError("HTTP 401")], delay_s=0)
    runner = EmbeddingRunner(embedder, FAST.model_copy(update={"concurrency": 1}), batch=1)
    with pytest.raises(FatalModelError, match="HTTP 401"):
        asyncio.run(runner.embed(["a", "b", "c", "d"]))
    assert runner.stats.sent == 1  # the batches waiting for a slot were never sent
    with pytest.raises(FatalModelError, match="the run stopped"):
        asyncio.run(runner.embed(["e"]))
    assert embedder.texts == []


def test_a_reply_of_the_wrong_shape_is_an_error() -> None:
    class Short(SlowEmbedder):
        async def embed(self, texts: Sequence[str]) -> Vectors:
            return bag_of_words(texts[:-1])

    with pytest.raises(ModelError, match="returned 1x64 values for 2 texts"):
        asyncio.run(EmbeddingRunner(Short(), FAST).embed(["a", "b"]))


def test_a_corrupt_cached_vector_is_embedded_again(tmp_path: Path) -> None:
    embedder = ScriptedEmbedder()
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        key = cache_key(embedder.identity, EmbeddingRequest("q"))
        cache.put_json(key, {"dim": 64, "vector_f32": "bm90IGEgdmVjdG9y"})  # "not a vector"
        vectors = asyncio.run(EmbeddingRunner(embedder, FAST, cache).embed(["q"], normalised=False))
        assert embedder.calls == [["q"]]
        np.testing.assert_array_equal(vectors, bag_of_words(["q"]))


def test_blocking_embedder_works_from_plain_code_and_inside_a_loop(tmp_path: Path) -> None:
    embedder = ScriptedEmbedder()
    cache = ResponseCache(tmp_path / "c.sqlite")
    with BlockingEmbedder(EmbeddingRunner(embedder, FAST, cache)) as blocking:
        plain = blocking.embed(["one two"])

        async def inside() -> Vectors:
            return blocking.embed(["one two", "three"])  # sync call from a coroutine, as LUNAR makes it

        nested = asyncio.run(inside())
        assert dict(blocking.identity) == {"backend": "scripted", "model": "bag-of-words"}
    cache.close()
    np.testing.assert_allclose(nested[0], plain[0])
    assert embedder.calls == [["one two"], ["three"]]  # the second call found "one two" cached
    with pytest.raises(RuntimeError, match="closed"):
        blocking.embed(["x"])


# -- openai: a real loopback /v1/embeddings server ---------------------------------------------


def test_openai_embeddings_come_back_in_input_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBED_KEY", "sk-embed-secret-0123456789")
    texts = ["first text", "second text", "third text"]
    with FakeOpenAIServer("letters") as server:
        embedder = load_embedder("openai:e", ModelConfig(base_url=server.base_url, api_key_env="EMBED_KEY"))
        runner = EmbeddingRunner(embedder, FAST)
        vectors = asyncio.run(runner.embed(texts, normalised=False))
        asyncio.run(runner.aclose())
        # The server listed its rows in reverse; the runner follows their index.
        np.testing.assert_allclose(vectors, np.asarray([vector_for(t) for t in texts]), rtol=1e-6)
        assert [h["authorization"] for h in server.headers_seen] == ["Bearer sk-embed-secret-0123456789"]
        assert len(server.bodies) == 1


def test_openai_embeddings_401_is_fatal_and_sent_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bad-0123456789abcdef")
    with FakeOpenAIServer("letters", plan=lambda key: ("401",) * 5) as server:
        embedder = load_embedder("openai:e", ModelConfig(base_url=server.base_url))
        with pytest.raises(FatalModelError, match="rejected the API key") as raised:
            asyncio.run(EmbeddingRunner(embedder, FAST).embed(["a"]))
        assert "sk-bad" not in str(raised.value)
        assert sum(server.counts.values()) == 1


def test_openai_malformed_embeddings_reply_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-0123456789abcdef")
    with FakeOpenAIServer("letters", plan=lambda key: ("malformed", "500")) as server:
        embedder = load_embedder("openai:e", ModelConfig(base_url=server.base_url))
        runner = EmbeddingRunner(embedder, FAST)
        vectors = asyncio.run(runner.embed(["a"]))
        assert runner.stats.retries == 2 and sum(server.counts.values()) == 3 and vectors.shape == (1, 8)


def _local_address() -> str | None:
    """This machine's address on its default route (not loopback), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            address = str(probe.getsockname()[0])
        except OSError:
            return None
    return None if address.startswith("127.") else address


@pytest.mark.parametrize("host", ["127.0.0.2", "non-loopback"])
def test_chat_and_embeddings_follow_one_loopback_rule(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key goes over plain http to any loopback host, and to nothing else, for both kinds."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-0123456789")
    address = host if host != "non-loopback" else _local_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address")
    with FakeOpenAIServer("letters", host=address) as server:
        url = server.base_url
        chat = load_model("openai:m", ModelConfig(base_url=url))
        asyncio.run(chat.complete(Request(messages=(Message("user", "hi"),))))
        asyncio.run(chat.aclose())
        embedder = load_embedder("openai:e", ModelConfig(base_url=url))
        asyncio.run(EmbeddingRunner(embedder, FAST).embed(["hi"]))
        sent = [h["authorization"] for h in server.headers_seen]
    expected = "Bearer sk-loopback-0123456789" if host.startswith("127.") else "Bearer EMPTY"
    assert sent == [expected, expected]


def test_embedder_specs_share_the_model_spec_parser() -> None:
    with pytest.raises(ConfigError, match="needs a name: openai:<model>"):
        load_embedder("openai")
    with pytest.raises(ConfigError, match=r"unknown embedder backend in 'sentence:x'.*known: minilm, openai"):
        load_embedder("sentence:x")
    with pytest.raises(ConfigError, match="the openai backend has no option 'batch'"):
        load_embedder("openai:e", ModelConfig(base_url="http://127.0.0.1:9/v1", options={"batch": 3}))
    with pytest.raises(ConfigError, match="the scripted embedder takes no name"):
        load_embedder("scripted:x")
