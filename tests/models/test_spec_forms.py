"""The ``--model`` help of ``recworld eval`` and LUNAR: generated from the backend rows, once.

The checker reads each listed form back through :meth:`ModelSpec.parse` and looks
the backend up, so a form the registry would not accept, or a built-in backend
left out, fails here.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from recworld.evaluation.cli_options import EvalCommand
from recworld.lunar.cli.flags import EMBEDDER, MODEL, role_flags
from recworld.lunar.contexts.memory import MemoryContext
from recworld.lunar.llm.config import EmbedderConfig
from recworld.models.registry import BACKENDS, EMBEDDERS, ModelKind, ModelSpec, find_backend, spec_forms


def _listed(help_text: str) -> dict[str, str]:
    """backend -> the form the help shows, from a ``Forms: a:NAME, b[:FILE] or c`` sentence."""
    forms = help_text.split("Forms: ", 1)[1].rstrip(".")
    out = {}
    for form in re.split(r", or a baseline: |, | or ", forms):
        out[form.split(":")[0].split("[")[0]] = form
    return out


def _reads_back(form: str, kind: ModelKind = "chat") -> str:
    """The backend a spec written in ``form`` names (NAME and the like filled in)."""
    spec = re.sub(r"\[:([^\]]+)\]", r":\1", form)
    spec = re.sub(r"[A-Z][A-Z/.a-z]*$", "x", spec) if ":" in spec else spec
    parsed = ModelSpec.parse(spec, kind)
    find_backend(parsed.backend, kind)  # a known backend, or ConfigError
    return parsed.backend


def test_eval_lists_every_builtin_backend_and_lunar_every_one_that_sends_requests() -> None:
    eval_forms = _listed(EvalCommand.model_fields["models"].description or "")
    lunar_forms = _listed(MODEL["model"].help or "")
    assert set(eval_forms) == set(BACKENDS)
    assert set(lunar_forms) == {name for name, row in BACKENDS.items() if row.sends_requests}
    for forms in (eval_forms, lunar_forms):
        assert all(_reads_back(form) == name for name, form in forms.items())
    assert eval_forms["hf"] == "hf:ORG/NAME" and eval_forms["random"] == "random"
    assert lunar_forms["scripted"] == "scripted[:FILE.json]"  # the name is optional


def test_a_new_row_shows_with_its_own_name_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BACKENDS, "acme", replace(BACKENDS["openai"], name_form="TEAM/NAME"))
    monkeypatch.setitem(BACKENDS, "coin", replace(BACKENDS["random"]))
    listed = _listed(f"Forms: {spec_forms()}.")
    assert listed["acme"] == "acme:TEAM/NAME" and listed["coin"] == "coin"
    assert "coin" not in _listed(f"Forms: {spec_forms(baselines=False)}.")


def test_every_embedder_help_lists_each_builtin_embedder_that_sends_requests() -> None:
    memory_flag = role_flags(MemoryContext.roles["memory_embedder"])["model"]
    helps = [
        EmbedderConfig.model_fields["model"].description or "",
        f"Forms: {(EMBEDDER['embedder.model'].help or '').split(': ', 1)[1]}",
        memory_flag.help or "",
    ]
    wanted = {name for name, row in EMBEDDERS.items() if row.sends_requests}
    for help_text in helps:
        forms = _listed(help_text.split(", or a plugin's spec")[0])
        assert set(forms) == wanted, help_text
        assert all(_reads_back(form, "embedding") == name for name, form in forms.items())
        assert forms["minilm"] == "minilm" and forms["openai"] == "openai:MODEL"  # minilm takes no name
    assert "scripted" not in spec_forms("embedding")  # the in-process test double is not offered


def test_a_new_embedder_row_shows_in_the_embedder_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(EMBEDDERS, "acme", replace(EMBEDDERS["st"], needs_name=False, name_form="DIR"))
    assert _listed(f"Forms: {spec_forms('embedding')}.")["acme"] == "acme[:DIR]"
    assert "acme" not in spec_forms()  # a chat help lists only chat backends
