"""Third-party backends: a package "installed" on sys.path is found by its ``recworld.models`` entry point."""

from __future__ import annotations

import asyncio
import logging
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from recworld.chat import Message, Request
from recworld.errors import ConfigError
from recworld.models import (
    ModelConfig,
    ModelSpec,
    backend_of,
    load_embedder,
    load_model,
    refresh_plugins,
)
from recworld.runner import EmbeddingRunner, ResponseCache, Runner, RunnerConfig

# What a third-party package ships: a light module with the declaration, and the backend itself.
DECLARATION = """
from pydantic import Field
from recworld.models import Backend
from recworld.models.options import BackendOptions


class EchoOptions(BackendOptions):
    prefix: str = "echo"
    repeat: int = Field(default=1, ge=1, le=100)


BACKEND = Backend("acme_echo.backend", EchoOptions, sends_requests=False)
EMBEDDER = Backend("acme_echo.backend:create_embedder", kind="embedding", needs_name=False)
"""

BACKEND_MODULE = """
import numpy as np
from recworld.chat import AnswerMode, Response, Usage
from recworld.models import EmbedderBase, ModelBase
from recworld.models.options import parse_options

from acme_echo import EchoOptions


class EchoModel(ModelBase):
    modes = frozenset({AnswerMode.GENERATE})

    def __init__(self, name, options):
        self._identity = {"backend": "acme", "model": name, "prefix": options.prefix}
        self._options = options

    async def complete(self, request):
        said = f"{self._options.prefix}:{request.messages[-1].content}"
        return Response(text=" ".join([said] * self._options.repeat), usage=Usage(1, 1))


class LengthEmbedder(EmbedderBase):
    def __init__(self):
        self._identity = {"backend": "acme-embed", "model": "length"}

    async def embed(self, texts):
        return np.asarray([[len(t), t.count(" ") + 1.0] for t in texts], dtype=np.float32)


def create(spec, config):
    return EchoModel(spec.name, parse_options(EchoOptions, config.options, spec.backend))


def create_embedder(spec, config):
    return LengthEmbedder()
"""

PLAIN = """
from recworld.chat import Response
from recworld.models.scripted import ScriptedModel

def create(spec, config):
    return ScriptedModel(lambda request: "plain:" + spec.name, name=spec.name)
"""


def install(root: Path, name: str, entry_points: str, files: dict[str, str]) -> None:
    """A distribution as pip would leave it: its modules, and a dist-info naming its entry points."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    refresh_plugins()
    yield tmp_path
    for name in [m for m in sys.modules if m.split(".")[0] in {"acme_echo", "plain_plugin", "broken_plugin"}]:
        del sys.modules[name]
    monkeypatch.undo()
    refresh_plugins()


@pytest.fixture
def acme(site: Path) -> Path:
    entry = """
        [recworld.models]
        acme = acme_echo:BACKEND
        acme-embed = acme_echo:EMBEDDER
    """
    install(
        site,
        "acme-echo",
        entry,
        {"acme_echo/__init__.py": DECLARATION, "acme_echo/backend.py": BACKEND_MODULE},
    )
    return site


def test_a_plugin_backend_answers_through_the_runner_with_its_typed_options(
    acme: Path, tmp_path: Path
) -> None:
    model = load_model("acme:parrot", ModelConfig(options={"prefix": "hi", "repeat": "2"}))
    request = Request(messages=(Message("user", "cat"),))
    with ResponseCache(tmp_path / "c.sqlite") as cache:

        async def twice() -> tuple[str, int]:
            runner = Runner(model, RunnerConfig(progress=False), cache)
            first = await runner.complete(request)
            again = await runner.complete(request)
            await runner.aclose()
            assert first.response is not None and again.cache_hit
            return first.response.text, runner.stats.sent

        assert asyncio.run(twice()) == ("hi:cat hi:cat", 1)
    assert backend_of("acme:parrot").sends_requests is False  # its declared capability


def test_a_plugins_bad_option_fails_before_its_backend_module_is_imported(acme: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"the acme backend has no option 'prefx' \(did you mean 'prefix'\?\) "
        r"\(its options: prefix, repeat\)",
    ):
        load_model("acme:x", ModelConfig(options={"prefx": "?"}))
    assert "acme_echo.backend" not in sys.modules and "acme_echo" in sys.modules


def test_a_plugin_embedder_is_found_by_kind(acme: Path) -> None:
    embedder = load_embedder("acme-embed")
    vectors = asyncio.run(
        EmbeddingRunner(embedder, RunnerConfig(progress=False)).embed(["a b", "abc"], normalised=False)
    )
    np.testing.assert_array_equal(vectors, [[3, 2], [3, 1]])
    with pytest.raises(ConfigError, match="'acme-embed' is an embedder backend, not a chat model backend"):
        load_model("acme-embed")


def test_a_plain_factory_entry_point_is_a_chat_backend_without_options(site: Path) -> None:
    install(
        site, "plain-plugin", "[recworld.models]\nplain = plain_plugin:create\n", {"plain_plugin.py": PLAIN}
    )
    model = load_model("plain:thing")
    assert asyncio.run(model.complete(Request(messages=(Message("user", "x"),)))).text == "plain:thing"
    with pytest.raises(ConfigError, match="the plain backend has no option 'x'"):
        load_model("plain:thing", ModelConfig(options={"x": 1}))


def test_a_broken_plugin_is_one_config_error_and_breaks_nothing_else(site: Path) -> None:
    install(
        site,
        "broken-plugin",
        "[recworld.models]\nbroken = broken_plugin:BACKEND\n",
        {"broken_plugin.py": "import a_module_that_is_not_installed\n"},
    )
    with pytest.raises(
        ConfigError, match=r"plugin 'broken' \(broken_plugin:BACKEND from broken-plugin 1.0\) failed"
    ):
        load_model("broken:x")
    assert load_model("scripted").identity["backend"] == "scripted"


def test_unknown_backends_list_the_plugins_and_suggest_them(acme: Path) -> None:
    with pytest.raises(ConfigError, match=r"known: hf, .*vllm; plugins: acme, acme-embed"):
        ModelSpec.parse("nope:x")
    with pytest.raises(ConfigError, match="did you mean 'acme:x'"):
        ModelSpec.parse("acmee:x")


def test_a_plugin_named_like_a_builtin_is_ignored_with_a_warning(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    install(
        site, "plain-plugin", "[recworld.models]\nopenai = plain_plugin:create\n", {"plain_plugin.py": PLAIN}
    )
    with caplog.at_level(logging.WARNING), pytest.raises(ConfigError, match="unknown model backend"):
        ModelSpec.parse("nope:x")
    assert "'openai' from plain-plugin 1.0 is ignored" in caplog.text
    assert backend_of("openai:gpt-4o-mini").module == "recworld.models.openai_compat"
