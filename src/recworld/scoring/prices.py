"""Model prices per million tokens: the file ``--prices`` names, for cost tables and dry-run estimates.

It lives with scoring because the evaluation and LUNAR dry runs and the report
(the tokens-and-cost table) all read it, and scoring sits below all three.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from recworld.capped import SETTINGS_LIMIT, read_capped_text
from recworld.errors import DataError
from recworld.io import iter_json_lines


@dataclass(frozen=True)
class Price:
    """US dollars per million input and output tokens."""

    input_per_m: float
    output_per_m: float


def read_prices(path: Path) -> dict[str, Price]:
    """A JSON-lines file of ``{"model": ..., "input": $/1M, "output": $/1M}``, or a CSV with that header."""
    if path.suffix.lower() == ".csv":
        return _prices_csv(path)
    out: dict[str, Price] = {}
    for line, record in iter_json_lines(path):
        try:
            out[str(record["model"])] = Price(float(record["input"]), float(record["output"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(
                f"expected model, input and output prices ({exc})", path=path, line=line
            ) from None
    return out


def _prices_csv(path: Path) -> dict[str, Price]:
    out: dict[str, Price] = {}
    text = read_capped_text(path, limit=SETTINGS_LIMIT, missing="prices file not found")
    try:
        for line, row in enumerate(csv.DictReader(io.StringIO(text, newline="")), start=2):
            try:
                out[row["model"]] = Price(float(row["input"]), float(row["output"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise DataError(f"expected model,input,output ({exc})", path=path, line=line) from None
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", path=path) from None
    return out
