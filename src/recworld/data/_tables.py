"""Read delimited text tables fast, and say exactly where a bad one goes wrong.

Every published format here is a delimited text file. The happy path hands the
whole file to pandas' C parser with fixed dtypes, which is what keeps ML-25M's
25 million rows quick. The C parser's own errors are vague ("could not convert
string to float"), so when it fails, or its result breaks a rule, the file is
scanned again line by line with the same rules, and the first bad line becomes
one :class:`~recworld.errors.DataError` naming the file, the 1-based line and
the field. The scan runs only on failure, so it costs nothing on good files.
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np
import pandas as pd

from recworld.capped import TABLE_LINE_LIMIT, check_line_lengths, open_regular
from recworld.errors import DataError

# Multi-character separators (ML-1M's "::") would force pandas' slow Python engine;
# they are rewritten to this byte, which never occurs in MovieLens text.
_UNIT_SEPARATOR = "\x1f"
_COMMON_SEPARATORS = ("\t", ",", "|", "::", ";")
_BOM = b"\xef\xbb\xbf"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_INTEGER = re.compile(r"\s*[+-]?\d+\s*", re.ASCII)


class ColumnKind(StrEnum):
    INT = "int"
    FLOAT = "float"
    TEXT = "text"


@dataclass(frozen=True)
class Column:
    """One column of a table: its name in the file, its kind, and whether it may be empty.

    ``low``/``high`` bound a numeric column (inclusive): a rating off the source's scale
    or a timestamp no calendar holds is refused with its line, not carried into the data.
    """

    name: str
    kind: ColumnKind = ColumnKind.TEXT
    required: bool = True
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class TableSpec:
    """How one file is laid out.

    ``columns`` lists every field of a row, in order. With ``header`` the first
    line names the columns instead: it must contain every name in ``columns``
    (other columns are read as text and may be empty).
    """

    path: Path
    columns: tuple[Column, ...]
    sep: str
    encoding: str = "utf-8"
    header: bool = False
    quoted: bool = False  # CSV double-quote rules (MovieLens .csv); off for tab/pipe/:: files

    @property
    def sep_name(self) -> str:
        return {"\t": "tab", ",": "comma", "|": "'|'", "::": "'::'", ";": "';'"}.get(self.sep, repr(self.sep))


def read_table(spec: TableSpec) -> pd.DataFrame:
    """Parse ``spec.path`` into a frame whose columns are the names in ``spec.columns``.

    INT columns come back as int64, FLOAT as float64, TEXT as strings ("" where empty).
    """
    path = spec.path
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise DataError("file not found", path=path) from exc
    if size == 0:
        raise DataError("file is empty", path=path, line=1)
    check_line_lengths(path)  # a 2 GiB line would be held whole by the parser: refused, bounded
    columns = _header_columns(spec) if spec.header else spec.columns
    try:
        frame = _fast_read(spec, columns)
    except (ValueError, OverflowError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        _raise_first_bad_line(spec, columns)
        if isinstance(exc, pd.errors.EmptyDataError):
            raise _no_rows(spec) from None
        raise DataError(f"cannot parse the file: {exc}", path=path) from exc
    if frame.empty:
        raise _no_rows(spec)
    if not _fast_result_ok(frame, columns):
        _raise_first_bad_line(spec, columns)
        raise DataError("cannot parse the file (fields missing or empty)", path=path)
    wanted = [c.name for c in spec.columns]
    return frame.loc[:, wanted] if spec.header else frame


def _no_rows(spec: TableSpec) -> DataError:
    if spec.header:
        return DataError("no data rows after the header", path=spec.path, line=2)
    return DataError("no data rows (only blank lines)", path=spec.path, line=1)


def _bom_length(path: Path) -> int:
    """3 when the file starts with a UTF-8 byte-order mark (read as the text after it), else 0."""
    with open_regular(path) as handle:
        return len(_BOM) if handle.read(len(_BOM)) == _BOM else 0


def _fast_read(
    spec: TableSpec, columns: tuple[Column, ...], data: bytes | None = None, *, skip_header: bool = True
) -> pd.DataFrame:
    """Parse the file (or ``data``, some of its lines) with the C parser and fixed dtypes."""
    if data is None and (bom := _bom_length(spec.path)):
        data = spec.path.read_bytes()[bom:]  # rare: one in-memory copy, the mark left out
    source: Path | io.BytesIO = spec.path if data is None else io.BytesIO(data)
    sep = spec.sep
    if len(sep) > 1:
        raw = spec.path.read_bytes() if data is None else data
        source = io.BytesIO(raw.replace(sep.encode("ascii"), _UNIT_SEPARATOR.encode()))
        sep = _UNIT_SEPARATOR
    with warnings.catch_warnings():  # pandas warns about the cast of "1e30" before it refuses it
        warnings.simplefilter("ignore", RuntimeWarning)
        frame = _read_csv(source, sep, columns, spec, skiprows=1 if spec.header and skip_header else 0)
    if frame.shape[1] != len(columns):
        # Rows shorter than the first are padded silently; the scan explains which line is off.
        raise ValueError(f"expected {len(columns)} fields, parsed {frame.shape[1]}")
    frame.columns = pd.Index([c.name for c in columns])
    return frame


def _read_csv(
    source: Path | io.BytesIO, sep: str, columns: tuple[Column, ...], spec: TableSpec, skiprows: int
) -> pd.DataFrame:
    dtypes: dict[int, str | type[str]] = {}
    for index, column in enumerate(columns):
        dtypes[index] = {ColumnKind.INT: "int64", ColumnKind.FLOAT: "float64"}.get(column.kind, str)
    return pd.read_csv(
        source,
        sep=sep,
        header=None,
        skiprows=skiprows,
        dtype=dtypes,
        encoding=spec.encoding,
        na_filter=False,
        quoting=csv.QUOTE_MINIMAL if spec.quoted else csv.QUOTE_NONE,
        engine="c",
        skip_blank_lines=True,
    )


def _fast_result_ok(frame: pd.DataFrame, columns: tuple[Column, ...]) -> bool:
    for column in columns:
        series = frame[column.name]
        if column.kind is ColumnKind.TEXT:
            if column.required and series.eq("").any():
                return False
            continue
        values = series.to_numpy(dtype="float64" if column.kind is ColumnKind.FLOAT else "int64")
        if column.kind is ColumnKind.FLOAT and not np.isfinite(values).all():
            return False
        if column.low is not None and len(values) and values.min() < column.low:
            return False
        if column.high is not None and len(values) and values.max() > column.high:
            return False
    return True


# -- header ----------------------------------------------------------------------------------------


def first_line(path: Path, encoding: str) -> str:
    """The first line of ``path`` without its line ending, decoded strictly."""
    with open_regular(path) as handle:
        raw = handle.readline(TABLE_LINE_LIMIT + 1).removeprefix(_BOM)
    if len(raw) > TABLE_LINE_LIMIT:
        raise DataError(f"line larger than {TABLE_LINE_LIMIT} bytes; refusing to read it", path=path, line=1)
    if not raw.strip():
        raise DataError("file is empty" if not raw else "the first line is blank", path=path, line=1)
    try:
        return raw.decode(encoding).rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise DataError(_decode_message(exc, encoding), path=path, line=1) from exc


def _split(line: str, spec: TableSpec) -> list[str]:
    if spec.quoted:
        return next(csv.reader([line], delimiter=spec.sep, strict=True))
    return line.split(spec.sep)


def _header_columns(spec: TableSpec) -> tuple[Column, ...]:
    names = _split(first_line(spec.path, spec.encoding), spec)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DataError("the header names this column twice", path=spec.path, line=1, field=name)
        seen.add(name)
    by_name = {c.name: c for c in spec.columns}
    for column in spec.columns:
        if column.name not in seen:
            hint = _separator_hint(names[0] if len(names) == 1 else "", spec)
            raise DataError(
                f"missing column; the header has {names}{hint}", path=spec.path, line=1, field=column.name
            )
    return tuple(by_name.get(name, Column(name, ColumnKind.TEXT, required=False)) for name in names)


# -- the slow, precise scan ------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with open_regular(path) as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                raw = raw.removeprefix(_BOM)
            yield number, raw.rstrip(b"\r\n")


# A failing file is checked in blocks: the C parser clears good blocks quickly and only
# a failing block is scanned line by line, so a bad last line of ML-25M costs seconds, not minutes.
_BLOCK_LINES = 100_000


def _decoded(spec: TableSpec, lines: list[tuple[int, bytes]]) -> Iterator[tuple[int, str]]:
    for number, raw in lines:
        try:
            yield number, raw.decode(spec.encoding)
        except UnicodeDecodeError as exc:
            raise DataError(_decode_message(exc, spec.encoding), path=spec.path, line=number) from exc


def _rows(spec: TableSpec, lines: list[tuple[int, bytes]]) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, line text, fields) of every non-blank line in ``lines``."""
    if not spec.quoted:
        for number, line in _decoded(spec, lines):
            if line:
                yield number, line, line.split(spec.sep)
        return
    # One reader over the block: building a reader per line would triple the scan time.
    reader = csv.reader((text for _, text in _decoded(spec, lines)), delimiter=spec.sep, strict=True)
    try:
        for values in reader:
            if values:
                number = lines[reader.line_num - 1][0]
                yield number, lines[reader.line_num - 1][1].decode(spec.encoding), values
    except csv.Error as exc:
        number = lines[min(reader.line_num, len(lines)) - 1][0]
        raise DataError(f"malformed quoting: {exc}", path=spec.path, line=number) from exc


def _blocks(path: Path) -> Iterator[list[tuple[int, bytes]]]:
    block: list[tuple[int, bytes]] = []
    for pair in _lines(path):
        block.append(pair)
        if len(block) == _BLOCK_LINES:
            yield block
            block = []
    if block:
        yield block


def _block_parses(spec: TableSpec, columns: tuple[Column, ...], block: list[tuple[int, bytes]]) -> bool:
    data = b"\n".join(raw for _, raw in block) + b"\n"
    try:
        return _fast_result_ok(_fast_read(spec, columns, data, skip_header=False), columns)
    except (ValueError, OverflowError, UnicodeDecodeError, pd.errors.EmptyDataError):
        return False


def _raise_first_bad_line(spec: TableSpec, columns: tuple[Column, ...]) -> None:
    """Raise a DataError for the first line that breaks the spec; return if none does."""
    header: list[str] | None = None
    for block in _blocks(spec.path):
        if spec.header and block[0][0] == 1:
            header = next(_rows(spec, block[:1]), (0, "", []))[2]
            block = block[1:]
        if len(block) == _BLOCK_LINES and _block_parses(spec, columns, block):
            continue
        for number, line, values in _rows(spec, block):
            if header is not None and values == header:
                raise DataError("the header line appears again", path=spec.path, line=number)
            problem, field = _check_row(values, line, spec, columns)
            if problem:
                raise DataError(problem, path=spec.path, line=number, field=field)


def _check_row(
    values: list[str], line: str, spec: TableSpec, columns: tuple[Column, ...]
) -> tuple[str | None, str | None]:
    if not line.strip():
        return "the line holds only whitespace", None
    if len(values) != len(columns):
        hint = _separator_hint(line, spec) if len(values) == 1 else ""
        return (
            f"expected {len(columns)} {spec.sep_name}-separated fields, found {len(values)}{hint}",
            None,
        )
    for column, value in zip(columns, values, strict=True):
        problem = _check_value(column, value)
        if problem:
            return problem, column.name
    return None, None


def _check_value(column: Column, value: str) -> str | None:
    if column.kind is ColumnKind.TEXT:
        return "empty value" if column.required and value == "" else None
    number: float | int
    if column.kind is ColumnKind.INT:
        if not _INTEGER.fullmatch(value):
            return f"expected an integer, got {value[:40]!r}"
        number = int(value)
        if not _INT64_MIN <= number <= _INT64_MAX:
            return f"integer {value.strip()[:40]} does not fit in 64 bits"
    else:
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            return f"expected a number, got {value[:40]!r}"
    if (column.low is not None and number < column.low) or (column.high is not None and number > column.high):
        return f"{value.strip()[:40]} is outside the allowed range {_fmt(column.low)}..{_fmt(column.high)}"
    return None


def _fmt(bound: float | None) -> str:
    if bound is None:
        return ""
    return str(int(bound)) if float(bound).is_integer() else str(bound)


def _separator_hint(line: str, spec: TableSpec) -> str:
    for other in _COMMON_SEPARATORS:
        if other != spec.sep and other in line:
            return f" (the file seems to use {other!r} as separator, this format uses {spec.sep!r})"
    return ""


def _decode_message(exc: UnicodeDecodeError, encoding: str) -> str:
    bad = exc.object[exc.start : exc.start + 1]
    return f"not valid {encoding} text: byte 0x{bad.hex()} at column {exc.start + 1}"


def line_of_row(spec: TableSpec, row: int) -> int:
    """The 1-based file line of parsed row ``row`` (0-based), skipping the header and blank lines.

    Used only to place an error found after parsing (a duplicate id, a bad code).
    """
    seen = -1
    for number, raw in _lines(spec.path):
        if (number == 1 and spec.header) or not raw:
            continue
        seen += 1
        if seen == row:
            return number
    return 0


def fail_at_row(spec: TableSpec, row: int, message: str, field: str | None = None) -> DataError:
    """A DataError for parsed row ``row`` of ``spec``'s file."""
    return DataError(message, path=spec.path, line=line_of_row(spec, row) or None, field=field)


def first_duplicate(values: pd.Series) -> int | None:
    """Row position of the first value that repeats an earlier one, or None."""
    dup = values.duplicated().to_numpy()
    return int(dup.argmax()) if dup.any() else None


def undecodable_line(path: Path, encoding: str) -> DataError | None:
    """A DataError for the first line of ``path`` that does not decode, or None.

    For readers (pyarrow, ``csv``) whose own decode error says nothing of where.
    """
    for number, raw in _lines(path):
        try:
            raw.decode(encoding)
        except UnicodeDecodeError as exc:
            return DataError(_decode_message(exc, encoding), path=path, line=number)
    return None
