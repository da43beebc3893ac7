"""JSON reading every layer shares: depth-guarded parsing, JSON-lines records, canonical text.

Every malformed input is one :class:`~recworld.errors.DataError` naming the
file (and line): syntax errors, bad UTF-8, nesting deeper than
:data:`MAX_JSON_DEPTH`, non-standard constants, files that are devices or FIFOs
or larger than their cap (:mod:`recworld.capped`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from recworld.capped import RECORD_LIMIT, iter_lines, open_regular, read_capped
from recworld.errors import DataError, from_validation

__all__ = [
    "MAX_JSON_DEPTH",
    "dumps_canonical",
    "iter_json_lines",
    "parse_json",
    "read_json_object",
    "read_models",
]

ModelT = TypeVar("ModelT", bound=BaseModel)
# Deeper JSON than this is not a record anyone wrote by hand or by tool; refuse it early
# (Python's json module would otherwise raise RecursionError near 1000 levels).
MAX_JSON_DEPTH = 64


def dumps_canonical(obj: Any) -> str:
    """JSON with sorted keys and no spaces: stable bytes for hashing and diffing.

    Strict JSON only: ``NaN`` or ``Infinity`` raise instead of being written.
    """
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def read_json_object(
    path: str | Path, *, missing: str = "missing file", limit: int = RECORD_LIMIT
) -> dict[str, Any]:
    """Read a JSON object, or raise :class:`DataError` naming the file (and line) that is wrong."""
    source = Path(path)
    data = parse_json(read_capped(source, limit=limit, missing=missing), path=source)
    if not isinstance(data, dict):
        raise DataError("expected a JSON object", path=source)
    return data


def _depth_ok(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """A cheap upper bound on nesting: brackets outside strings never exceed ``limit`` deep."""
    if text.count("[") + text.count("{") <= limit:
        return True
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def parse_json(
    text: str | bytes,
    *,
    path: str | Path | None = None,
    line: int | None = None,
    surrogates: bool = False,
) -> Any:
    """``json.loads`` that turns every malformed input into one :class:`DataError`.

    Covers syntax errors, bad UTF-8, nesting deeper than :data:`MAX_JSON_DEPTH`,
    the non-standard constants ``NaN``/``Infinity``, which no record of ours holds,
    and lone UTF-16 surrogates (``"\\ud800"``), which no UTF-8 file can hold and
    which would fail the first write of the value. A caller that cleans text
    itself (a server reply, :func:`recworld.models._replies.parse_reply`) passes
    ``surrogates=True`` to receive them.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DataError(f"not UTF-8 (byte {exc.start})", path=path, line=line) from None
    if not _depth_ok(text):
        raise DataError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", path=path, line=line)

    def _constant(name: str) -> Any:
        raise DataError(f"non-standard JSON constant {name}", path=path, line=line)

    try:
        value = json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise DataError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path, line=at) from None
    except (ValueError, RecursionError) as exc:  # an integer of more than 4300 digits, say
        raise DataError(f"invalid JSON: {exc}", path=path, line=line) from None
    if not surrogates and ("\\ud" in text or "\\uD" in text) and not _encodable(value):
        raise DataError("a lone UTF-16 surrogate escape (not text)", path=path, line=line)
    return value


def _encodable(value: Any) -> bool:
    """Whether ``value`` holds only text that UTF-8 can encode (no lone surrogate)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def iter_json_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON-lines file.

    The one JSON-lines reader of the package: a missing file, a device or FIFO, a
    line over :data:`recworld.capped.LINE_LIMIT`, bad UTF-8, bad JSON, excessive
    nesting or a line that is not an object raises :class:`DataError` naming
    ``file:line``. A UTF-8 byte-order mark at the start is skipped.
    """
    source = Path(path)
    with open_regular(source) as handle:
        for number, raw in iter_lines(handle, source):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            record = parse_json(raw, path=source, line=number)
            if not isinstance(record, dict):
                raise DataError("expected a JSON object", path=source, line=number)
            yield number, record


def read_models(path: str | Path, model: type[ModelT]) -> list[ModelT]:
    """Every line of a JSON-lines file validated as ``model``; errors name ``file:line`` and the field."""
    out: list[ModelT] = []
    for number, record in iter_json_lines(path):
        try:
            out.append(model.model_validate(record))
        except ValidationError as exc:
            raise from_validation(exc, path=path, line=number) from None
    return out
