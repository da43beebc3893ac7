"""One ``fail_on_error`` setting: every config that ends its run with ``judge()`` declares it alike.

The checker reads each field's pydantic metadata (bounds, help, default) and
compares it with the runner's declaration, so a stage that declares its own
copy (with other words or bounds) fails here.
"""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest
from pydantic import BaseModel

from recworld.evaluation import config as eval_config
from recworld.lunar import config as lunar_config
from recworld.multimodal import job as multimodal_job
from recworld.runner import policy


def _configs(module: ModuleType) -> list[type[BaseModel]]:
    return [
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, BaseModel)
        and cls.__module__ == module.__name__
        and "fail_on_error" in cls.model_fields
    ]


def _bounds(cls: type[BaseModel]) -> tuple[object, object]:
    metadata = cls.model_fields["fail_on_error"].metadata
    ge = next(m.ge for m in metadata if hasattr(m, "ge"))
    le = next(m.le for m in metadata if hasattr(m, "le"))
    return ge, le


@pytest.mark.parametrize("module", [lunar_config, eval_config, multimodal_job], ids=lambda m: m.__name__)
def test_every_fail_on_error_is_the_runners_declaration(module: ModuleType) -> None:
    configs = _configs(module)
    assert configs, f"{module.__name__} has no config with fail_on_error"
    shared = policy.FailOnError.__metadata__[0]
    for cls in configs:
        field = cls.model_fields["fail_on_error"]
        assert field.description == shared.description, cls.__name__
        assert _bounds(cls) == (0.0, 1.0), cls.__name__
        assert field.default == policy.DEFAULT_FAIL_ON_ERROR, cls.__name__
    assert not hasattr(lunar_config, "FailOnError") or lunar_config.FailOnError is policy.FailOnError
