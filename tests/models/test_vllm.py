"""vLLM is a GPU extra: here only its spec parsing and the missing-extra message are checked."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from recworld.errors import ConfigError, MissingDependencyError
from recworld.models import ModelSpec, load_model


def test_spec_parsing() -> None:
    spec = ModelSpec.parse("vllm:Qwen/Qwen2-7B-Instruct")
    assert (spec.backend, spec.name) == ("vllm", "Qwen/Qwen2-7B-Instruct")
    with pytest.raises(ConfigError, match="needs a name"):
        ModelSpec.parse("vllm")


def test_missing_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("vllm") is not None:
        monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(MissingDependencyError, match=re.escape("pip install 'recworld[vllm]'")):
        load_model("vllm:Qwen/Qwen2-7B-Instruct")
