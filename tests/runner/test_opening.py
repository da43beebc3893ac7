"""Every road that opens a Runner: a borrowed model is never closed, an owned one always is, on any exit.

The roads are the callers of :mod:`recworld.runner.opening`, each driven through
its own public entry point: an LRWorld eval, the Ray driver's ``answer_all``, a
LUNAR session, a LUNAR embedder, the memory embedder's async runner,
``describe-images`` and the shipped contract tests. Each is run with the model
owned (a spec the road loads itself) and borrowed (an object handed over), ending
normally and ending in an error: a cache path that passes through a symbolic link
inside a claimed output folder, which every road must refuse.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helpers.runner_fakes import write_suite
from recworld.chat import AnswerMode, Message, Request
from recworld.errors import ConfigError
from recworld.io import confine
from recworld.models.backend import Backend
from recworld.models.registry import BACKENDS, EMBEDDERS
from recworld.models.scripted import ScriptedEmbedder, ScriptedModel
from recworld.runner import (
    RunnerConfig,
    answer_all,
    open_blocking_embedder,
    open_embedding_runner,
    open_runner,
)

QUIET = RunnerConfig(progress=False, max_retries=0)


def _answer(request: Request) -> str:
    return request.choices[0] if request.choices else "ok"


class SpyModel(ScriptedModel):
    """A scripted model that counts how often it was closed."""

    def __init__(self) -> None:
        super().__init__(_answer, name="spy")
        self.closes = 0

    async def aclose(self) -> None:
        self.closes += 1


class SpyEmbedder(ScriptedEmbedder):
    def __init__(self) -> None:
        super().__init__(name="spy")
        self.closes = 0

    async def aclose(self) -> None:
        self.closes += 1


@dataclass
class Spies:
    """Every model and embedder a road asked, with whether the road owns it (must close it)."""

    asked: list[tuple[SpyModel | SpyEmbedder, bool]]

    def model(self, *, owned: bool) -> SpyModel:
        self.asked.append((SpyModel(), owned))
        return self.asked[-1][0]  # type: ignore[return-value]

    def embedder(self, *, owned: bool) -> SpyEmbedder:
        self.asked.append((SpyEmbedder(), owned))
        return self.asked[-1][0]  # type: ignore[return-value]


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> Spies:
    """``spy`` as a chat and an embedder backend: each spec load is a new spy, owned by the road.

    ``monkeypatch.setitem`` puts the registries back after the test.
    """
    made = Spies([])
    model = Backend(factory=lambda spec, config: made.model(owned=True), needs_name=False)
    embedder = Backend(
        factory=lambda spec, config: made.embedder(owned=True), needs_name=False, kind="embedding"
    )
    monkeypatch.setitem(BACKENDS, "spy", model)
    monkeypatch.setitem(EMBEDDERS, "spy", embedder)
    return made


def _request(k: int) -> Request:
    return Request((Message("user", f"question {k}"),), mode=AnswerMode.GENERATE, max_tokens=4)


# -- the roads: each runs with its cache file at ``cache``, its models and embedders in ``spies`` ---------

Road = Callable[[Path, Path, bool, Spies], None]


def _eval(tmp: Path, cache: Path, owned: bool, spies: Spies) -> None:
    from recworld.evaluation import EvalConfig, evaluate_config

    suite = write_suite(tmp / "suite", {"kg_movie_genre": 2})
    given = None if owned else spies.model(owned=False)
    config = EvalConfig(suite_dir=suite, out_dir=tmp / "run", model="spy", runner=QUIET, cache_path=cache)
    evaluate_config(config, model=given)


def _ray_answer_all(tmp: Path, cache: Path, owned: bool, spies: Spies) -> None:
    # The Ray driver hands answer_all its pool of replicas, which it always owns.
    model = spies.model(owned=True)
    asyncio.run(answer_all(model, [_request(k) for k in range(3)], QUIET, cache))


def _lunar_session(tmp: Path, cache: Path, owned: bool, spies: Spies) -> None:
    from recworld.lunar.llm.config import SessionConfig
    from recworld.lunar.llm.session import CACHE_FILE, open_llm

    assert cache.name == CACHE_FILE
    config = SessionConfig(model="spy" if owned else spies.model(owned=False))

    async def ask() -> None:
        async with open_llm(config, cache.parent) as llm:
            await llm.completer.complete(_request(0))

    asyncio.run(ask())


def _lunar_embedder(tmp: Path, cache: Path, owned: bool, spies: Spies) -> None:
    from recworld.lunar.llm.config import EmbedderConfig
    from recworld.lunar.llm.embed import EMBEDDINGS_FILE, open_embedder

    assert cache.name == EMBEDDINGS_FILE
    config = EmbedderConfig(spec="spy") if owned else EmbedderConfig.of(spies.embedder(owned=False))
    with open_embedder(config, cache.parent) as embedder:
        assert embedder.embed(["a text"]).shape[0] == 1


def _embedding_runner(tmp: Path, cache: Path, owned: bool, spies: Spies) -> None:
    # The memory context's road (its embedder beside the memory loop).
    embedder = spies.embedder(owned=owned)

    async def embed() -> None:
        async with open_embedding_runner(embedder, QUIET, cache, owned=owned) as runner:
            assert (await runner.embed(["a text"])).shape[0] == 1

    asyncio.run(embed())


def _blocking_embedder(tmp: Path, cache: Path, owned: bool, spies: Spies) -> None:
    embedder = spies.embedder(owned=owned)
    with open_blocking_embedder(embedder, QUIET, cache, owned=owned) as blocking:
        assert blocking.embed(["a text"]).shape[0] == 1


def _describe_images(tmp: Path, cache: Path, owned: bool, spies: Spies) -> None:
    from recworld.data.dataset import Dataset
    from recworld.multimodal.describe import CACHE_NAME, DescribeJob, run_describe_async

    assert cache.name == CACHE_NAME
    interactions = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": ["m1", "m2"], "timestamp": [1, 2]})
    items = pd.DataFrame(
        {"item_id": ["m1", "m2"], "title": ["A", "B"], "image": ["https://example.org/1.jpg"] * 2}
    )
    data = Dataset.from_frames("toy", "movie", interactions, items).save(tmp / "toy")
    job = DescribeJob(
        dataset=str(data), model="spy", out=tmp / "described", state_dir=cache.parent, runner=QUIET
    )
    asyncio.run(run_describe_async(job, model=None if owned else spies.model(owned=False)))


def _model_contract(tmp: Path, cache: Path, owned: bool, spies: Spies) -> None:
    from recworld.testing import ModelContract

    ModelContract().test_answers_survive_the_response_cache(spies.model(owned=False), cache.parent)


def _embedder_contract(tmp: Path, cache: Path, owned: bool, spies: Spies) -> None:
    from recworld.testing import EmbedderContract

    EmbedderContract().test_vectors_survive_the_cache(spies.embedder(owned=False), cache.parent)


# (road, its cache file's name, the ownerships it takes)
ROADS: dict[str, tuple[Road, str, tuple[bool, ...]]] = {
    "eval": (_eval, "cache.sqlite", (True, False)),
    "ray-answer_all": (_ray_answer_all, "cache.sqlite", (True,)),
    "lunar-session": (_lunar_session, "cache.sqlite", (True, False)),
    "lunar-embedder": (_lunar_embedder, "embeddings.sqlite", (True, False)),
    "embedding-runner": (_embedding_runner, "embeddings.sqlite", (True, False)),
    "blocking-embedder": (_blocking_embedder, "embeddings.sqlite", (True, False)),
    "describe-images": (_describe_images, "cache.sqlite", (True, False)),
    "model-contract": (_model_contract, "contract.sqlite", (False,)),
    "embedder-contract": (_embedder_contract, "contract.sqlite", (False,)),
}
CASES = [
    pytest.param(name, owned, id=f"{name}-{'owned' if owned else 'borrowed'}")
    for name, (_road, _file, ownerships) in ROADS.items()
    for owned in ownerships
]


@pytest.fixture
def output(tmp_path: Path) -> Iterator[Path]:
    """A folder claimed as an output of this process (writes below it never pass through a link)."""
    out = tmp_path / "out"
    out.mkdir()
    confine(out)
    yield out


def _closed_by_ownership(spies: Spies) -> None:
    assert spies.asked, "the road asked no model"
    for spy, owned in spies.asked:
        assert spy.closes == (1 if owned else 0), (type(spy).__name__, owned, spy.closes)


@pytest.mark.parametrize(("name", "owned"), CASES)
def test_an_owned_model_is_closed_once_and_a_borrowed_one_never(
    name: str, owned: bool, spies: Spies, output: Path, tmp_path: Path
) -> None:
    road, file, _ = ROADS[name]
    road(tmp_path, output / "state" / file, owned, spies)
    assert [o for _, o in spies.asked] == [owned]  # one model, owned as the case says
    _closed_by_ownership(spies)
    assert (output / "state" / file).is_file()  # the road really kept its cache there


@pytest.mark.parametrize(("name", "owned"), CASES)
def test_a_linked_cache_inside_an_output_is_refused_and_ownership_still_holds(
    name: str, owned: bool, spies: Spies, output: Path, tmp_path: Path
) -> None:
    road, file, _ = ROADS[name]
    outside = tmp_path / "outside"
    outside.mkdir()
    (output / "state").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ConfigError, match="symbolic link inside the output folder"):
        road(tmp_path, output / "state" / file, owned, spies)
    assert list(outside.iterdir()) == []  # nothing was written through the link
    _closed_by_ownership(spies)  # an owned model is closed although its road failed


@pytest.mark.parametrize("owned", [True, False])
def test_an_error_inside_the_block_still_drains_and_closes_by_ownership(owned: bool, tmp_path: Path) -> None:
    model, embedder = SpyModel(), SpyEmbedder()

    async def fail() -> None:
        async with open_runner(model, QUIET, tmp_path / "c.sqlite", owned=owned) as runner:
            asked = asyncio.ensure_future(runner.complete(_request(1)))
            await asyncio.sleep(0)  # the send is in flight when the block fails
            assert not asked.done()
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        asyncio.run(fail())
    assert model.closes == (1 if owned else 0)
    assert len(model.calls) == 1  # the send in flight finished before anything closed

    with (
        pytest.raises(RuntimeError, match="boom"),
        open_blocking_embedder(embedder, QUIET, tmp_path / "e.sqlite", owned=owned) as blocking,
    ):
        assert np.isfinite(blocking.embed(["x"])).all()
        raise RuntimeError("boom")
    assert embedder.closes == (1 if owned else 0)
