"""The two bases every typed record in RecWorld derives from: one declaration of what a record is.

* :class:`Record` is anything RecWorld writes to disk or hands between packages:
  manifests, run headers, samples, metrics, LUNAR outputs, configs stored inside
  them. Unknown fields are refused (``extra="forbid"``), so a renamed field fails
  where it is read instead of vanishing. A versioned record declares its own
  ``schema_id: Literal["recworld.<name>/<n>"] = Field(default=..., alias="schema")``
  and is written with :meth:`Record.to_json`, which uses the alias, so the file
  says ``"schema"`` while Python code says ``schema_id``. :meth:`Record.read` and
  :meth:`Record.write` are the one way a record goes to and from a JSON file, with
  errors that name the file and the field.
* :class:`Draft` is what a model is asked to produce (a JSON schema for
  constrained decoding) before it is checked and turned into a record. Drafts are
  never written as they are, so they carry no schema and no aliases.
* :class:`Settings` is mixed into every class of settings a user gives (the
  command line, a ``--config`` TOML file, a library keyword): ``EvalConfig``,
  ``RunnerConfig``, ``ModelConfig``, the backend options, ``BuildConfig``, the
  LUNAR stage configs.

Invariant (:class:`Settings`): every number a user gives is finite and in
range. ``inf``, ``nan`` (also spelled as text or as a TOML float), negatives
where none make sense and absurdly large values are one validation error, so
one config error before any work, and nothing non-JSON ever reaches a record.
It holds by construction: a settings class whose int or float field (alone, in
an ``Optional`` or in a tuple) lacks a lower or an upper bound is a
``TypeError`` when the class is defined, so no field added later can forget.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated, Any, Self, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recworld.errors import from_validation
from recworld.io import atomic_write_json, read_json_object


class Record(BaseModel):
    """A typed, versionable record: strict on read, written by alias (``schema``), JSON types only."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        """The on-disk form: field aliases (``schema``), JSON types."""
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def read(cls, path: str | Path, *, missing: str = "missing file") -> Self:
        """One JSON-object file validated as this record; errors name the file and the field."""
        try:
            return cls.model_validate(read_json_object(path, missing=missing))
        except ValidationError as exc:
            raise from_validation(exc, path=Path(path)) from None

    def write(self, path: str | Path) -> None:
        """Write the record atomically (temp file, then rename) as indented JSON."""
        atomic_write_json(path, self.to_json())


class FrozenRecord(Record):
    """A record that is never changed after it is made (samples, questions, manifests)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


# The largest count or seed a setting may hold: what every JSON reader (int64) and numpy can take.
MAX_INT = 2**63 - 1
# Seeds everything random (recworld.seeding); numpy's SeedSequence takes no negative one.
Seed = Annotated[int, Field(ge=0, le=MAX_INT)]
# A count of something (questions, users, records): at least 1.
Count = Annotated[int, Field(ge=1, le=MAX_INT)]
# Seconds a user may ask to wait for one thing (a request, a retry, a connection): a day at most.
MAX_SECONDS = 86_400.0
# Tokens of one reply or one context window: 16 Mi at most (no model holds more).
MAX_TOKENS = 1 << 24

_LOWER = (annotated_types.Ge, annotated_types.Gt)
_UPPER = (annotated_types.Le, annotated_types.Lt)


def _numeric_leaves(annotation: Any, metadata: list[Any]) -> list[tuple[Any, list[Any]]]:
    """Each int or float an annotation holds, with the constraints that apply to it."""
    if get_origin(annotation) is Annotated:
        inner, *extra = get_args(annotation)
        found: list[Any] = []
        for item in extra:
            found.extend(getattr(item, "metadata", [item]))
        return _numeric_leaves(inner, [*metadata, *found])
    if annotation in (int, float):
        return [(annotation, metadata)]
    if get_origin(annotation) in (Union, types.UnionType):
        return [leaf for arg in get_args(annotation) for leaf in _numeric_leaves(arg, metadata)]
    if get_origin(annotation) in (tuple, list, frozenset, set):
        return [
            leaf for arg in get_args(annotation) if arg is not Ellipsis for leaf in _numeric_leaves(arg, [])
        ]
    return []


def unbounded_numbers(cls: type[BaseModel]) -> list[str]:
    """The fields of ``cls`` holding an int or float without both a lower and an upper bound."""
    missing = []
    for name, info in cls.model_fields.items():
        for _kind, constraints in _numeric_leaves(info.annotation, list(info.metadata)):
            if not any(isinstance(c, _LOWER) for c in constraints) or not any(
                isinstance(c, _UPPER) for c in constraints
            ):
                missing.append(name)
    return missing


class Settings(BaseModel):
    """Mixed into every settings class: finite, bounded numbers only (see the module docstring)."""

    # A refused value may be a secret (a key in a URL): errors name the field, never echo the input.
    model_config = ConfigDict(allow_inf_nan=False, hide_input_in_errors=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        missing = unbounded_numbers(cls)
        if missing:
            raise TypeError(
                f"{cls.__qualname__}: settings {', '.join(missing)} need a lower and an upper bound "
                "(ge/gt and le/lt), so no user can give inf, a negative or an absurd value"
            )


class Draft(BaseModel):
    """What a model is asked to produce: strict, schema-only, never written as it is."""

    model_config = ConfigDict(extra="forbid")
