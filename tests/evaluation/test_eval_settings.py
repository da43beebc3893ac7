"""``EvalSettings`` (the typed keywords of ``recworld.evaluate``) follows ``EvalConfig``'s fields.

The class is written by hand; these tests hold it to the config: the same keys
as the keywords the config generates, and each value type the field's own type
widened by the rule :func:`library_type` writes down here (a path also as a
string, a tuple as any sequence, a dict as any mapping, an enum also as its
values). A field added, renamed or retyped without ``EvalSettings`` fails here.
"""

from __future__ import annotations

import enum
import functools
import operator
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

from pydantic import BaseModel

from recworld.evaluation import EvalConfig, EvalSettings
from recworld.evaluation.api import make_config

ROOT = Path(__file__).resolve().parents[2]


def config_fields(config: type[BaseModel]) -> dict[str, tuple[tuple[str, ...], Any]]:
    """``{keyword: (path, field annotation)}`` for every keyword ``config`` accepts."""
    from recworld.console.options import option_fields

    out: dict[str, tuple[tuple[str, ...], Any]] = {}
    for option in option_fields(config):
        if not option.file:
            continue
        model: type[BaseModel] = config
        for part in option.path[:-1]:
            model = model.model_fields[part].annotation  # type: ignore[assignment]
        out[option.key] = (option.path, model.model_fields[option.path[-1]].annotation)
    return out


def _union(members: list[Any]) -> Any:
    return functools.reduce(operator.or_, members)


def library_type(annotation: Any) -> Any:
    """The type a library keyword takes for a field of type ``annotation``."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return library_type(get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return _union([library_type(a) for a in get_args(annotation)])
    if origin is tuple:
        item, ellipsis = get_args(annotation)
        assert ellipsis is Ellipsis, annotation
        return Sequence[library_type(item)]  # type: ignore[misc]
    if origin is dict:
        return Mapping[get_args(annotation)]  # type: ignore[misc]
    if annotation is Path:
        return str | Path
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation | Literal[tuple(m.value for m in annotation)]  # type: ignore[valid-type]
    return annotation


def test_the_keys_are_the_configs_keywords() -> None:
    assert set(EvalSettings.__annotations__) == set(config_fields(EvalConfig))
    assert EvalSettings.__required_keys__ == frozenset()  # every keyword has the config's default


def test_each_keyword_has_its_fields_type() -> None:
    hints = get_type_hints(EvalSettings)
    wrong = {
        key: (hints[key], library_type(annotation))
        for key, (_path, annotation) in config_fields(EvalConfig).items()
        if hints[key] != library_type(annotation)
    }
    assert not wrong, f"EvalSettings disagrees with EvalConfig (got, want): {wrong}"


def test_the_widening_rule_sees_a_retyped_field() -> None:
    assert library_type(int | None) == int | None
    assert library_type(tuple[Path, ...]) == Sequence[str | Path]
    assert library_type(Annotated[str, "meta"] | None) == str | None
    assert library_type(float) != library_type(int)


def test_every_typed_value_is_one_the_config_takes(tmp_path: Path) -> None:
    """The widened types are real inputs: a string path, a list, a mapping and an enum's value all build."""
    settings: EvalSettings = {
        "out": str(tmp_path / "run"),
        "image_root": [str(tmp_path)],
        "measures": ["a", "b"],
        "model_options": {"n_ctx": "8"},
        "mode": "rank",
        "cache_path": str(tmp_path / "c.sqlite"),
    }
    config, _obj = make_config(tmp_path, "llamacpp:m.gguf", settings)
    assert config.out_dir == tmp_path / "run" and config.image_roots == (tmp_path,)
    assert config.measures == ("a", "b") and config.mode == "rank"
    assert make_config(tmp_path, "random", {"measures": "a, b"})[0].measures == ("a", "b")


def test_mypy_checks_the_typed_calls() -> None:
    """``tests/typecheck`` holds the wrong calls mypy must refuse; it is only a check if mypy reads it."""
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert "tests/typecheck" in mypy["files"] and mypy["warn_unused_ignores"] is True
    assert (ROOT / "tests" / "typecheck" / "library_calls.py").is_file()
