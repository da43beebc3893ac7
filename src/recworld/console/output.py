"""Results on stdout: ``--json`` for scripts, tables that never hide an id.

A rich table on a terminal wide enough to show it whole; otherwise (piped,
redirected, or too narrow) one tab-separated line per row under a header line,
so ``cut -f1`` and ``grep`` work and no id is cut to ``mem_item_i…``. The ``--json``
and ``--progress`` flags themselves are config field types (``AsJson``, ``Progress``
in :mod:`recworld.console.options`).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from recworld.console.terminal import strip_control

# JSON escapes C0 controls itself; DEL and C1 it leaves raw with ensure_ascii=False. Escaped, they are the
# same JSON value and no terminal acts on them.
_RAW_CONTROLS = re.compile(r"[\x7f-\x9f]")


def emit_json(value: Any) -> None:
    """Write ``value`` as one JSON document on stdout (paths and other objects as strings)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write(_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")
    sys.stdout.flush()


def _cell(value: object) -> str:
    return strip_control(str(value).replace("\t", " ").replace("\n", " "))


def plain_table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Tab-separated text: a header line, then one line per row (no tabs, newlines or controls in a cell)."""
    clean = [[_cell(cell) for cell in row] for row in [columns, *rows]]
    return "".join("\t".join(row) + "\n" for row in clean)


def natural_width(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> int:
    """Columns a rich table needs to show every cell whole: widest cell + 2 padding + 1 rule each, + 1."""
    from rich.cells import cell_len

    widths = [cell_len(str(c)) for c in columns]
    for row in rows:
        widths = [max(w, cell_len(str(cell))) for w, cell in zip(widths, row, strict=False)]
    return sum(w + 3 for w in widths) + 1


def print_table(
    columns: Sequence[str], rows: Sequence[Sequence[object]], *, title: str | None = None
) -> None:
    """A rich table when stdout is a terminal wide enough for every cell, else :func:`plain_table`."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    if console.is_terminal and natural_width(columns, rows) <= console.width:
        table = Table(title=Text(strip_control(title)) if title else None)
        for column in columns:
            table.add_column(Text(_cell(column)), no_wrap=True)
        for row in rows:
            table.add_row(*(Text(_cell(cell)) for cell in row))
        console.print(table)
        return
    sys.stdout.write(plain_table(columns, rows))
    sys.stdout.flush()
