"""Model prices per million tokens: the file ``--prices`` names, for cost tables and dry-run estimates.

It lives with scoring because the evaluation and LUNAR dry runs and the report
(the tokens-and-cost table) all read it, and scoring sits below all three.

The format (``docs/evaluation.md``), one row per model, US dollars per million tokens:

* JSON lines: ``{"model": "openai:gpt-4o-mini", "input": 0.15, "output": 0.6}``;
* or CSV (a ``.csv`` file) with the header ``model,input,output``.

``model`` is a spec (``openai:gpt-4o-mini``) or a bare model name
(``gpt-4o-mini``), which prices that name under any backend. A row with
another key, a missing or negative price, or a model listed twice is an error
naming the file and line; so is a file with no rows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld.capped import SETTINGS_LIMIT, read_capped_text
from recworld.console import did_you_mean, phrase
from recworld.errors import DataError
from recworld.io import iter_json_lines

__all__ = ["Price", "PriceTable", "read_prices"]

_KEYS = ("model", "input", "output")


@dataclass(frozen=True)
class Price:
    """US dollars per million input and output tokens."""

    input_per_m: float
    output_per_m: float


class PriceTable(Mapping[str, Price]):
    """The rows of a prices file; looking up a spec falls back to its bare model name.

    ``table["openai:gpt-4o-mini"]`` finds a row keyed ``openai:gpt-4o-mini``, and
    otherwise one keyed ``gpt-4o-mini``; :meth:`unmatched` names the specs that
    find neither, so a caller can warn instead of printing "no price".
    """

    def __init__(self, rows: Mapping[str, Price], path: Path | None = None) -> None:
        self._rows = dict(rows)
        self.path = path

    def __getitem__(self, spec: str) -> Price:
        if spec in self._rows:
            return self._rows[spec]
        _backend, sep, name = spec.partition(":")
        if sep and name in self._rows:
            return self._rows[name]
        raise KeyError(spec)

    def __contains__(self, spec: object) -> bool:
        return isinstance(spec, str) and self.get(spec) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def unmatched(self, specs: list[str]) -> list[str]:
        """The specs no row prices, each once, in order."""
        return [s for s in dict.fromkeys(specs) if s not in self]

    def warning(self, spec: str) -> str:
        """``prices.jsonl: no row for 'openai:gpt-4o' (did you mean 'gpt-4o-mini'?); rows: ...``."""
        _backend, _sep, name = spec.partition(":")
        hint = phrase(did_you_mean(name or spec, list(self._rows), n=1))
        rows = ", ".join(sorted(self._rows)[:5]) + (", ..." if len(self._rows) > 5 else "")
        where = f"{self.path}: " if self.path is not None else ""
        return f"{where}no row for {spec!r} (nor for {name!r}){hint}; its cost is not estimated; rows: {rows}"


def read_prices(path: Path) -> PriceTable:
    """A JSON-lines file of ``{"model": ..., "input": $/1M, "output": $/1M}``, or a CSV with that header."""
    rows = _prices_csv(path) if path.suffix.lower() == ".csv" else _prices_jsonl(path)
    table: dict[str, Price] = {}
    first: dict[str, int] = {}
    for line, model, price in rows:
        if model in table:
            raise DataError(
                f"model {model!r} is listed twice (first on line {first[model]})", path=path, line=line
            )
        table[model], first[model] = price, line
    if not table:
        raise DataError("no prices: expected rows of model, input and output (USD per 1M tokens)", path=path)
    return PriceTable(table, path)


def _row(record: Mapping[str, Any], path: Path, line: int) -> tuple[int, str, Price]:
    unknown = [k for k in record if k not in _KEYS]
    if unknown:
        hint = phrase(did_you_mean(str(unknown[0]), list(_KEYS), n=1))
        raise DataError(
            f"unknown key {unknown[0]!r}{hint}; expected model, input, output", path=path, line=line
        )
    missing = [k for k in _KEYS if record.get(k) in (None, "")]
    if missing:
        raise DataError(f"missing {', '.join(missing)}; expected model, input, output", path=path, line=line)
    values = []
    for key in ("input", "output"):
        try:
            value = float(record[key])
        except (TypeError, ValueError):
            raise DataError(
                f"{key}: {record[key]!r} is not a number (USD per 1M tokens)", path=path, line=line
            ) from None
        if not value >= 0:
            raise DataError(
                f"{key}: {value:g} is not a price (USD per 1M tokens, 0 or more)", path=path, line=line
            )
        values.append(value)
    return line, str(record["model"]).strip(), Price(values[0], values[1])


def _prices_jsonl(path: Path) -> list[tuple[int, str, Price]]:
    out = []
    for line, record in iter_json_lines(path):
        if not isinstance(record, dict):
            raise DataError("expected a JSON object of model, input and output", path=path, line=line)
        out.append(_row(record, path, line))
    return out


def _prices_csv(path: Path) -> list[tuple[int, str, Price]]:
    text = read_capped_text(path, limit=SETTINGS_LIMIT, missing="prices file not found")
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        header = [h.strip() for h in next(reader, [])]
        if sorted(header) != sorted(_KEYS):
            raise DataError(
                f"expected the header model,input,output, found {','.join(header) or 'nothing'}",
                path=path,
                line=1,
            )
        out = []
        for line, cells in enumerate(reader, start=2):
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > len(header):
                raise DataError(f"{len(cells)} cells, the header has {len(header)}", path=path, line=line)
            out.append(_row(dict(zip(header, (c.strip() for c in cells), strict=False)), path, line))
        return out
    except csv.Error as exc:
        raise DataError(f"malformed CSV: {exc}", path=path) from None
