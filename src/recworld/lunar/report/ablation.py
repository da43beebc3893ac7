"""The evidence-ablation section of the LUNAR report: Table 5 (Full-E vs Single-E) and the k-scaling curve.

Reads what :mod:`recworld.lunar.answering.ablate` wrote under ``RUN/ablate/``. Scores are
the personalisation judge's Avg ((PC+PD)/2); a failed answer counts as the
judge module scores it, a failed judgment is left out and counted.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from recworld.lunar.answering.ablate import ABLATE_DIR, MULTI_FULL, MULTI_SINGLE, SINGLE_DOMAIN
from recworld.lunar.judges.personalization import Judgment
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import EvalRun
from recworld.mdsafe import md_cell

# Avg per (model, variant): (mean or None, scored n, judge errors)
Cell = tuple[float | None, int, int]
_RC: Any = {"svg.fonttype": "none", "svg.hashsalt": "recworld", "text.parse_math": False, "font.size": 9}
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")


def ablation_cells(root: Path) -> dict[str, dict[str, Cell]]:
    """model -> variant -> (mean Avg, scored, judge errors) for every ablation run under ``root``."""
    out: dict[str, dict[str, Cell]] = {}
    for run_path in sorted((root / ABLATE_DIR).glob("*/eval/*/curated/run.json")):
        variant = run_path.parents[3].name
        run = EvalRun.read(run_path)
        judged = store.read_jsonl(run_path.parent / "judgments.jsonl", Judgment)
        values = [float(j.avg) for j in judged if j.avg is not None]
        cell = (float(np.mean(values)) if values else None, len(values), len(judged) - len(values))
        out.setdefault(run.model, {})[variant] = cell
    return out


def _k_values(cells: Mapping[str, Cell]) -> list[tuple[int, float]]:
    ks = sorted(int(v[1:]) for v in cells if re.fullmatch(r"k\d+", v))
    return [(k, m) for k in ks if (m := cells[f"k{k}"][0]) is not None]


def _fmt(cell: Cell | None) -> str:
    if cell is None or cell[0] is None:
        return "–"
    return f"{cell[0]:.2f} (n={cell[1]}{f', {cell[2]} judge errors' if cell[2] else ''})"


def _drop(cells: Mapping[str, Cell]) -> str:
    full, single = cells.get(MULTI_FULL), cells.get(MULTI_SINGLE)
    if not full or not single or full[0] is None or single[0] is None:
        return "–"
    return f"{full[0] - single[0]:+.2f}"


def _rows(cells: Mapping[str, Mapping[str, Cell]]) -> list[list[str]]:
    rows = []
    for model, by in sorted(cells.items()):
        curve = " ".join(f"k{k}={m:.2f}" for k, m in _k_values(by)) or "–"
        rows.append(
            [
                model,
                _fmt(by.get(SINGLE_DOMAIN)),
                _fmt(by.get(MULTI_FULL)),
                _fmt(by.get(MULTI_SINGLE)),
                _drop(by),
                curve,
            ]
        )
    return rows


HEADER = [
    "model",
    "single-domain queries",
    "multi-domain Full-E",
    "multi-domain Single-E",
    "Full-E − Single-E",
    "Avg by k",
]


def render_markdown(cells: Mapping[str, Mapping[str, Cell]]) -> str:
    if not cells:
        return ""
    lines = [
        "",
        "## Evidence ablations (Table 5, Fig. 3; Avg = (PC+PD)/2 against the generic answer)",
        "",
        "| " + " | ".join(HEADER) + " |",
        "| " + " | ".join("---" for _ in HEADER) + " |",
    ]
    lines += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in _rows(cells)]
    return "\n".join(lines) + "\n"


def k_scaling_svg(cells: Mapping[str, Mapping[str, Cell]]) -> str | None:
    """One line per model: mean Avg against the number of evidence records shown."""
    curves = {m: _k_values(by) for m, by in sorted(cells.items()) if _k_values(by)}
    if not curves:
        return None
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(5.5, 3.2))
        FigureCanvasSVG(fig)
        ax = fig.add_subplot()
        for i, (model, points) in enumerate(curves.items()):
            ks, means = zip(*points, strict=True)
            ax.plot(ks, means, marker="o", color=_PALETTE[i % len(_PALETTE)], label=model.replace("$", r"\$"))
        ax.set_xlabel("evidence records shown (k)")
        ax.set_ylabel("mean Avg (1–5)")
        ax.set_title("Evidence scaling on multi-domain queries")
        ax.set_xticks(sorted({k for p in curves.values() for k, _ in p}))
        ax.legend(fontsize=7, frameon=False)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buf.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r'\bid="([^"]+)"', r'id="kscale-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", r"url(#kscale-\1)", text)
    text = re.sub(r'href="#([^"]+)"', r'href="#kscale-\1"', text)
    return text.replace("<svg ", '<svg class="chart" id="k-scaling" ', 1)


def render_html(cells: Mapping[str, Mapping[str, Cell]]) -> str:
    if not cells:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADER)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in _rows(cells)
    )
    svg = (
        k_scaling_svg(cells)
        or "<p>No multi-domain query has enough evidence records for the k-scaling curve.</p>"
    )
    return (
        '<section id="evidence-ablations"><h2>Evidence ablations (Table 5, Fig. 3)</h2>'
        f'<table id="ablation-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        f"<figure>{svg}<figcaption>Mean Avg by number of evidence records (k)</figcaption></figure></section>"
    )


def ablation_section(root: Path) -> tuple[str, str]:
    """(markdown, html) of this section; empty strings when ``lunar ablate`` has not run."""
    cells = ablation_cells(root)
    return render_markdown(cells), render_html(cells)
