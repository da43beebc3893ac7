"""RecWorld's own backends under the shipped contract (:mod:`recworld.testing`) that backend authors run."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.models import LETTERS, question, toy_dataset
from helpers.openai_fakes import contract_handler, fake_server_model
from recworld.chat import Message, Request, Response
from recworld.lrworld.schema import Target
from recworld.models import (
    EMBEDDERS,
    AnswerMode,
    Embedder,
    Model,
    ModelBase,
    ModelConfig,
    load_embedder,
    load_model,
)
from recworld.models.scripted import ScriptedModel
from recworld.testing import PROMPT, SECRET, EmbedderContract, ModelContract


class TestScripted(ModelContract):
    backends = ("scripted",)

    @pytest.fixture
    def model(self) -> Model:
        return load_model("scripted")


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("contract-suite")
    toy_dataset().save(root / "dataset")
    return root


@pytest.mark.parametrize("spec", ["random", "popularity", "itemknn"])
class TestBaselines(ModelContract):
    backends = ("random", "popularity", "itemknn")

    def make_request(self, mode: AnswerMode, k: int = 0) -> Request:
        """Baselines answer from the structured question, with one label per candidate."""
        q = question(
            "mem_item_item",
            Target(kind="item", id=f"i{20 + k}", text=""),
            [f"i{(k + j) % 10}" for j in range(10)],
        )
        labels = tuple(LETTERS[:10])
        choices = tuple(c.text for c in q.candidates) if mode is AnswerMode.RANK else labels
        messages = (PROMPT[0], Message("user", f"{PROMPT[1].content} {k}"))
        return Request(messages, mode=mode, choices=choices, max_tokens=4, question=q.public)

    @pytest.fixture
    def model(self, spec: str, suite_dir: Path) -> Model:
        return load_model(spec, ModelConfig(suite_dir=suite_dir))


@pytest.fixture(scope="module")
def smollm2_model() -> Iterator[Model]:
    pytest.importorskip("llama_cpp")
    model = load_model("llamacpp:smollm2-135m", ModelConfig(n_ctx=512, n_threads=1))
    yield model
    asyncio.run(model.aclose())


@pytest.fixture(scope="module")
def gemma_model(gemma_path: Path) -> Iterator[Model]:
    pytest.importorskip("llama_cpp")
    model = load_model(f"llamacpp:{gemma_path}", ModelConfig(n_ctx=512, n_threads=1))
    yield model
    asyncio.run(model.aclose())


@pytest.fixture(scope="module")
def tiny_hf_model(tiny_hf_chat: Path) -> Model:
    return load_model(f"hf:{tiny_hf_chat}", ModelConfig(options={"device": "cpu"}))


@pytest.mark.model
class TestSmolLM2(ModelContract):
    backends = ("llamacpp",)

    @pytest.fixture
    def model(self, smollm2_model: Model) -> Model:
        return smollm2_model


@pytest.mark.model
class TestGemma(ModelContract):
    backends = ("llamacpp",)

    @pytest.fixture
    def model(self, gemma_model: Model) -> Model:
        return gemma_model


class TestTinyHF(ModelContract):
    backends = ("hf",)

    choices = ("A", "B", "C", "D", "comedy drama")
    option_texts = ("comedy", "drama", "horror", "animation documentary")

    @pytest.fixture
    def model(self, tiny_hf_model: Model) -> Model:
        return tiny_hf_model


class TestOpenAICompat(ModelContract):
    """Against an in-process fake server (chat, chat logprobs and rank's echoing completions)."""

    backends = ("openai",)
    choices = ("A", "B", "C")  # the fake server's top logprobs hold these labels

    @pytest.fixture
    def model(self, monkeypatch: pytest.MonkeyPatch) -> Model:
        monkeypatch.setenv("CONTRACT_KEY", SECRET)
        config = ModelConfig(base_url="https://fake/v1", api_key_env="CONTRACT_KEY")
        return fake_server_model(config, handler=contract_handler)


class TestScriptedEmbedder(EmbedderContract):
    backends = ("scripted",)

    @pytest.fixture
    def embedder(self) -> Embedder:
        return load_embedder("scripted")


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    pytest.importorskip("sentence_transformers")
    return load_embedder("minilm")


@pytest.mark.model
class TestMiniLM(EmbedderContract):
    backends = ("minilm", "st")

    @pytest.fixture
    def embedder(self, minilm: Embedder) -> Embedder:
        return minilm


def test_every_registered_backend_is_covered() -> None:
    from recworld.models import BACKENDS

    covered = {b for cls in ModelContract.__subclasses__() for b in cls.backends}
    # Covered elsewhere, with the reason:
    # vllm needs a GPU (test_vllm.py runs its paths on a fake vllm module); hf-vision needs a
    # vision checkpoint (tests/multimodal/test_hf_vision.py); the oracle answers only questions of a
    # built suite (tests/lrworld/test_fidelity.py checks it scores >= 0.99 on every measure).
    elsewhere = {"vllm", "hf-vision", "oracle"}
    assert set(BACKENDS) - covered == elsewhere
    embedders = {b for cls in EmbedderContract.__subclasses__() for b in cls.backends}
    # openai: tests/models/test_embedders.py runs it against a loopback /v1/embeddings server.
    assert set(EMBEDDERS) - embedders == {"openai"}


# -- the contract fails the backends it should ---------------------------------------------------


class _Empty(ModelBase):
    """Answers "" to everything: the old isinstance-only generate check passed it."""

    modes = frozenset({AnswerMode.GENERATE})

    def __init__(self) -> None:
        self._identity = {"backend": "empty", "model": "x"}

    async def complete(self, request: Request) -> Response:
        return Response(text="")


def _overclaiming() -> Model:
    """Declares loglik but answers it like generate: the old supports check passed it."""
    return ScriptedModel(
        lambda r: Response(text="A"), supports=frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK})
    )


def _pathful() -> Model:
    return ScriptedModel(lambda r: "A", name="/home/me/models/secret.gguf")


@pytest.mark.parametrize(
    ("make", "check", "message"),
    [
        (_Empty, "test_generate_returns_the_same_text_for_the_same_greedy_request", "empty answer"),
        (_overclaiming, "test_declared_modes_are_served_and_others_refused", "choice_logprobs=None"),
        (_pathful, "test_identity_is_stable_and_has_no_secrets", "local paths"),
    ],
)
def test_the_contract_rejects_a_backend_that_only_looks_right(make: object, check: str, message: str) -> None:
    contract = ModelContract()
    with pytest.raises(AssertionError, match=message):
        getattr(contract, check)(make())  # type: ignore[operator]


def test_the_contract_rejects_answering_an_undeclared_mode() -> None:
    liar = ScriptedModel(lambda r: "A", supports=frozenset({AnswerMode.GENERATE}))
    with pytest.raises(AssertionError, match="loglik is not declared but was answered"):
        ModelContract().test_declared_modes_are_served_and_others_refused(liar)


def test_the_testing_package_imports_without_pytest() -> None:
    import subprocess
    import sys

    code = "import sys; sys.modules['pytest'] = None; import recworld.testing; print('ok')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr
