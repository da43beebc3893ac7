"""CSV text that a spreadsheet opens as data: the one writer every CSV output goes through.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return as a formula (OWASP "CSV injection"): a dataset folder name
or a rater called ``=HYPERLINK("http://evil.example","alice")`` would become a
live link. :func:`csv_cell` prefixes such a text cell with ``'`` (the cell then
shows as typed); numbers, including negative ones, are left alone because they
are data. :func:`csv_text` and :func:`csv_dict_text` write whole files with
every cell escaped, so no writer can forget one.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

__all__ = ["csv_cell", "csv_dict_text", "csv_text"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# A plain decimal number (what our own number formatting writes); anything else starting with a sign is text.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """``value``, with a leading ``'`` when a spreadsheet would read it as a formula.

    ``None``, booleans and numbers pass unchanged; any other value is a text
    cell (``csv`` writes ``str(value)``) and is escaped when that text starts
    with a formula character and is not a plain decimal number.
    """
    if value is None or isinstance(value, bool | int | float):
        return value
    text = value if isinstance(value, str) else str(value)
    if text.startswith(FORMULA_START) and _NUMBER.fullmatch(text) is None:
        return "'" + text
    return text


def csv_text(rows: Iterable[Sequence[Any]]) -> str:
    """Rows (the header first, when there is one) as CSV text with LF line ends, every cell escaped.

    ``csv`` quotes a cell holding the line terminator but not a lone carriage
    return, which every reader takes for a line end; a row with one is written
    with every cell quoted.
    """
    buffer = io.StringIO()
    minimal = csv.writer(buffer, lineterminator="\n")
    quoted = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in rows:
        cells = [csv_cell(value) for value in row]
        (quoted if any(isinstance(c, str) and "\r" in c for c in cells) else minimal).writerow(cells)
    return buffer.getvalue()


def csv_dict_text(
    fields: Sequence[str],
    rows: Iterable[Mapping[str, Any]],
    *,
    extrasaction: Literal["raise", "ignore"] = "raise",
) -> str:
    """A header of ``fields``, then one line per mapping (a missing key: an empty cell), all escaped."""
    names = list(fields)
    table: list[list[Any]] = [names]
    for row in rows:
        extra = [key for key in row if key not in names]
        if extra and extrasaction == "raise":
            raise ValueError(f"dict contains fields not in fieldnames: {', '.join(map(repr, extra))}")
        table.append([row.get(name, "") for name in names])
    return csv_text(table)
