"""Every number a user gives is finite and in range (issue 23, item 5; review 3, D13 and B12/B13).

``--timeout inf`` once ran, wrote ``"timeout_s": Infinity`` into ``run.json``,
and every later ``report`` or rerun of that run failed to read it (a bricked
run). The class is every int or float setting of every settings class, found by
introspection (every :class:`recworld.records.Settings` subclass in the
package, so a class or field added later is covered), given floats including
``inf``/``nan``, negatives and huge values, as numbers and as text. A value is
accepted only when it is finite, not negative and below 2**63; the checker
knows nothing of the bounds each field declares.
"""

from __future__ import annotations

import importlib
import json
import math
import pkgutil
import types
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

import recworld
from helpers.cli import run_recworld
from recworld.records import Settings

HUGE = 2**63  # no count, size or seed a user means is this large


def settings_classes() -> list[type[BaseModel]]:
    for module in pkgutil.walk_packages(recworld.__path__, "recworld."):
        importlib.import_module(module.name)
    found: list[type[BaseModel]] = []
    stack = list(Settings.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("recworld.") and cls not in found:
            found.append(cls)
    return sorted(found, key=lambda c: f"{c.__module__}.{c.__qualname__}")


def holds_a_number(annotation: Any) -> bool:
    """Whether an annotation is, or holds, an int or a float (bools are not numbers here)."""
    if annotation in (int, float):
        return True
    if get_origin(annotation) is Annotated:
        return holds_a_number(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType, tuple, list):
        return any(holds_a_number(a) for a in get_args(annotation) if a is not Ellipsis)
    return False


CLASSES = settings_classes()
FIELDS = [
    (cls, name, get_origin(info.annotation) in (tuple, list))
    for cls in CLASSES
    for name, info in cls.model_fields.items()
    if holds_a_number(info.annotation)
]


def test_the_classes_a_user_fills_are_all_found() -> None:
    names = {c.__qualname__ for c in CLASSES}
    for expected in (
        "EvalConfig",
        "RunnerConfig",
        "ModelConfig",
        "OpenAIOptions",
        "BuildConfig",
        "NeuMFConfig",
    ):
        assert expected in names
    for expected in ("SynthConfig", "SynthOptions", "LunarEvalConfig", "SessionConfig", "EmbedderConfig"):
        assert expected in names
    assert len(FIELDS) >= 60


def field_accepts(cls: type[BaseModel], name: str, value: Any) -> bool:
    """Whether ``cls`` has no complaint about field ``name`` holding ``value`` (others may be missing)."""
    try:
        cls.model_validate({name: value})
    except ValidationError as exc:
        return not any(e["loc"][:1] == (name,) for e in exc.errors())
    return True


def acceptable(value: Any) -> bool:
    """The independent judge: a finite number from 0 to 2**63 (text read as Python reads a number)."""
    try:
        number = float(value) if not isinstance(value, int) else value
    except (TypeError, ValueError):
        return True  # not a number at all: pydantic's own type check
    finite = isinstance(number, int) or math.isfinite(number)
    return finite and 0 <= number < HUGE


NUMBERS = (
    st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.sampled_from([math.inf, -math.inf, math.nan, 1e308, -1e-300, 2**63, 2**64, -1, 10**30])
    | st.sampled_from(["inf", "-inf", "nan", "NaN", "Infinity", "1e400", "-1", "1e30", " 3", "9" * 30])
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(FIELDS), NUMBERS)
def test_every_numeric_setting_refuses_what_is_not_a_finite_sane_number(
    where: tuple[type[BaseModel], str, bool], value: Any
) -> None:
    cls, name, many = where
    given_value = [value] if many else value
    if field_accepts(cls, name, given_value):
        assert acceptable(value), f"{cls.__qualname__}.{name} accepted {value!r}"


@pytest.mark.parametrize(("cls", "name", "many"), FIELDS, ids=lambda v: getattr(v, "__qualname__", str(v)))
def test_each_numeric_setting_refuses_inf_nan_negative_and_huge(
    cls: type[BaseModel], name: str, many: bool
) -> None:
    """Every field, each of the review's values (the generator above samples; this covers all)."""
    for value in (math.inf, -math.inf, math.nan, "inf", "nan", "1e400", -1, -1e-9, 10**30, 1e300):
        assert not field_accepts(cls, name, [value] if many else value), (cls.__qualname__, name, value)


def test_a_settings_class_without_bounds_cannot_be_defined() -> None:
    with pytest.raises(TypeError, match="need a lower and an upper bound"):
        type("Unbounded", (Settings,), {"__annotations__": {"n": int}, "n": 0})
    with pytest.raises(TypeError, match="need a lower and an upper bound"):
        type("HalfBounded", (Settings,), {"__annotations__": {"x": Annotated[float, Field(ge=0)]}, "x": 0.0})
    with pytest.raises(TypeError, match="need a lower and an upper bound"):
        type("Layers", (Settings,), {"__annotations__": {"t": tuple[int, ...]}, "t": ()})
    bounded = type(
        "Bounded", (Settings,), {"__annotations__": {"n": Annotated[int, Field(ge=0, le=9)]}, "n": 0}
    )
    assert bounded().n == 0  # type: ignore[attr-defined]


def test_options_come_only_from_settings_classes() -> None:
    """The command line and the TOML keys are generated from a class: it must be a Settings one."""
    from recworld.console.options import option_fields

    class Plain(BaseModel):
        timeout_s: float = 1.0

    with pytest.raises(TypeError, match=r"must derive from recworld\.records\.Settings"):
        option_fields(Plain)


# -- the command line and TOML: one config error, before any work ------------------------------------------


@pytest.mark.parametrize(
    "flags",
    [
        ["--timeout", "inf"],  # D13: the run completed and bricked run.json
        ["--backoff", "inf", "--backoff-max", "inf"],
        ["--timeout", "nan"],
        ["--timeout", "1e400"],
        ["--timeout", "-1"],
        ["--timeout", "1e30"],
        ["--max-retries", "1" + "0" * 30],
        ["--concurrency", "1" + "0" * 20],
        ["--temperature", "nan"],
        ["--temperature", "Infinity"],
        ["--limit", "1" + "0" * 30],
        ["--seed", "-1"],
        ["--fail-on-error", "nan"],
        ["--progress-every", "inf"],
        ["--max-tokens", "1" + "0" * 12],
        ["--model-option", "connect_timeout_s=inf"],
    ],
)
def test_d13_a_number_out_of_range_is_one_config_error_before_any_work(
    evil_suite: Path, work: Path, flags: list[str]
) -> None:
    out = work / "run"
    runs = sorted(p.name for p in (evil_suite / "runs").iterdir()) if (evil_suite / "runs").exists() else []
    argv = ["eval", evil_suite, "--model", "openai:x", "--base-url", "http://127.0.0.1:9/v1", "--out", out]
    ran = run_recworld(*argv, "--no-progress", *flags)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("\n") == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert not out.exists()  # before any work: no run folder, no claim, no log
    now = sorted(p.name for p in (evil_suite / "runs").iterdir()) if (evil_suite / "runs").exists() else []
    assert now == runs


@pytest.mark.parametrize(
    "toml",
    [
        "timeout = inf",
        "timeout = nan",
        "backoff_max = +inf",
        "temperature = -nan",
        "seed = -5",
        "max_retries = 9223372036854775807",
        "model_options = { connect_timeout_s = inf }",
        "model_options = { anything = { deep = [1.0, nan] } }",
        '[[models]]\nspec = "openai:x"\ntimeout = inf',
    ],
)
def test_d13_toml_values_out_of_range_are_one_config_error(evil_suite: Path, work: Path, toml: str) -> None:
    config = work / "eval.toml"
    config.write_text(toml + "\n", encoding="utf-8")
    out = work / "run"
    argv = ["eval", evil_suite, "--config", config, "--base-url", "http://127.0.0.1:9/v1", "--out", out]
    if "[[models]]" not in toml:
        argv += ["--model", "openai:x"]
    ran = run_recworld(*argv, "--no-progress")
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.count("\n") == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert not out.exists()


def test_d13_a_valid_run_json_is_strict_json(evil_suite: Path, work: Path) -> None:
    """The largest accepted values still make a run.json every JSON reader takes."""
    out = work / "run"
    flags = ["--timeout", "86400", "--backoff-max", "86400", "--seed", str(2**63 - 1), "--limit", "1"]
    ran = run_recworld("eval", evil_suite, "--model", "random", "--out", out, "--no-progress", *flags)
    assert ran.returncode == 0, ran.stderr

    def refuse(name: str) -> Any:
        raise ValueError(name)

    header = json.loads((out / "run.json").read_text(encoding="utf-8"), parse_constant=refuse)
    assert header["config"]["runner"]["timeout_s"] == 86400


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "{suite}", "--seed", "-1"],
        ["report", "{suite}", "--seed", "1" + "0" * 30],
        ["report", "{suite}", "--tsne-clusters", "1" + "0" * 20],
        ["lunar", "annotate", "{suite}", "--seed", "-3"],
        ["lunar", "annotate", "{suite}", "--histories", "1" + "0" * 30],
    ],
)
def test_numbers_of_hand_declared_options_are_bounded_too(
    evil_suite: Path, work: Path, argv: list[str]
) -> None:
    ran = run_recworld(*[a.format(suite=evil_suite) for a in argv])
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr
