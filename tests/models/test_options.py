"""Typed per-backend options: checked when a model is created, before anything heavy loads."""

from __future__ import annotations

import sys

import pytest

from recworld.errors import ConfigError
from recworld.models import BACKENDS, ModelConfig, load_model
from recworld.models.options import HFOptions, NoOptions, VLLMOptions, parse_options


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        (
            "hf:some/model",
            {"batch_szie": 4},
            r"hf backend has no option 'batch_szie' \(did you mean 'batch_size'.*\) "
            r"\(its options: .*batch_size",
        ),
        ("vllm:some/model", {"engine_arg": {}}, r"vllm backend has no option 'engine_arg'"),
        ("llamacpp:x.gguf", {"n_gpu_layers": 1}, r"llamacpp backend has no option 'n_gpu_layers'"),
        ("hf-vision:some/model", {"batch_size": 2}, r"hf-vision backend has no option 'batch_size'"),
        ("random", {"anything": 1}, r"random backend has no option 'anything' \(its options: none\)"),
        (
            "scripted",
            {"delay": 1},
            r"scripted backend has no option 'delay' \(did you mean 'delay_s'\?\) "
            r"\(its options: calls_log, delay_s\)",
        ),
        ("popularity", {"neighbours": 5}, r"popularity backend has no option 'neighbours'"),
        ("itemknn", {"neighbours": 0}, r"itemknn backend's option 'neighbours'.*greater than or equal to 1"),
        ("hf:some/model", {"batch_size": "many"}, r"hf backend's option 'batch_size'"),
    ],
)
def test_bad_options_fail_before_the_backend_is_imported(
    spec: str, options: dict[str, object], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were the backend imported, these would fail differently (no vllm, no such file or repo).
    monkeypatch.setitem(sys.modules, "vllm", None)
    with pytest.raises(ConfigError, match=message):
        load_model(spec, ModelConfig(options=options))


def test_command_line_strings_are_coerced() -> None:
    hf = parse_options(HFOptions, {"batch_size": "4", "batch_wait_s": "0.5", "device": "cpu"}, "hf")
    assert (hf.batch_size, hf.batch_wait_s, hf.device) == (4, 0.5, "cpu")
    vllm = parse_options(VLLMOptions, {"engine_args": '{"tensor_parallel_size": 2}'}, "vllm")
    assert vllm.engine_args == {"tensor_parallel_size": 2}
    with pytest.raises(ConfigError, match="engine_args"):
        parse_options(VLLMOptions, {"engine_args": "{not json"}, "vllm")


def test_every_backend_declares_an_options_class() -> None:
    for name, backend in BACKENDS.items():
        assert backend.options.model_config.get("extra") == "forbid", name
    assert BACKENDS["random"].options is NoOptions


def test_model_config_has_no_free_extra_dict() -> None:
    with pytest.raises(ValueError, match="extra"):
        ModelConfig(extra={"device": "cpu"})  # type: ignore[call-arg]
