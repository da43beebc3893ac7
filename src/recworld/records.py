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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ValidationError

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


class Draft(BaseModel):
    """What a model is asked to produce: strict, schema-only, never written as it is."""

    model_config = ConfigDict(extra="forbid")
