"""Report section: privacy x personalisation (Fig. 4 of the paper) and truncated contexts.

One point per (model, context): x is the mean personalisation Avg (failed answers at
the floor, judge errors left out), y the mean privacy score (answers the privacy
judge scored). Both axes are cut at 3.0 into four regions; the Pareto front is the
set of points no other point beats on both axes. The chart is an SVG drawn by
matplotlib with mathtext off, embedded inline, so the page stays static.
"""

from __future__ import annotations

import html
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from recworld.lunar.contexts.base import report_order
from recworld.lunar.judges.personalization import Judgment
from recworld.lunar.judges.privacy import PrivacyJudgment
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import AnswerRecord, EvalRun
from recworld.mdsafe import md_cell

CUT = 3.0
REGIONS = {
    (True, True): "balanced",
    (True, False): "aggressive",
    (False, True): "conservative",
    (False, False): "ineffective",
}


@dataclass(frozen=True)
class Point:
    model: str
    context: str
    personalisation: float | None
    privacy: float | None
    scored: int
    privacy_errors: int
    failed_answers: int
    offences: dict[str, int]

    @property
    def label(self) -> str:
        return f"{self.model} / {self.context}"

    @property
    def region(self) -> str | None:
        if self.personalisation is None or self.privacy is None:
            return None
        return REGIONS[(self.personalisation >= CUT, self.privacy >= CUT)]


@dataclass(frozen=True)
class Truncation:
    model: str
    context: str
    answers: int
    truncated: int
    shown: int
    total: int
    counter: str

    @property
    def dropped_share(self) -> float:
        return 1 - self.shown / self.total if self.total else 0.0


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def privacy_points(root: Path) -> list[Point]:
    points = []
    for run_path in sorted((root / "eval").glob("*/*/run.json")):
        path = run_path.parent / "privacy.jsonl"
        if not path.exists():
            continue
        run = EvalRun.read(run_path)
        privacy = store.read_jsonl(path, PrivacyJudgment)
        judged = store.read_jsonl(run_path.parent / "judgments.jsonl", Judgment)
        offences: dict[str, int] = {}
        for p in privacy:
            for o in p.offences:
                offences[o.kind] = offences.get(o.kind, 0) + 1
        points.append(
            Point(
                model=run.model,
                context=run.context,
                personalisation=_mean([j.avg for j in judged if j.error is None and j.avg is not None]),
                privacy=_mean([float(p.score) for p in privacy if p.score is not None]),
                scored=sum(p.score is not None for p in privacy),
                privacy_errors=sum(p.error is not None and not p.answer_failed for p in privacy),
                failed_answers=sum(p.answer_failed for p in privacy),
                offences=offences,
            )
        )
    return points


def pareto_front(points: Sequence[Point]) -> list[Point]:
    """Points not dominated on (personalisation, privacy), by ascending personalisation."""
    full = [p for p in points if p.personalisation is not None and p.privacy is not None]

    def beats(a: Point, b: Point) -> bool:
        assert a.personalisation is not None and a.privacy is not None
        assert b.personalisation is not None and b.privacy is not None
        ge = a.personalisation >= b.personalisation and a.privacy >= b.privacy
        return ge and (a.personalisation > b.personalisation or a.privacy > b.privacy)

    front = [p for p in full if not any(beats(q, p) for q in full)]
    return sorted(front, key=lambda p: (p.personalisation, p.label))


def truncation_rows(root: Path) -> list[Truncation]:
    """Per (model, context) whose answers record coverage (a setting that may truncate, e.g. ``full``)."""
    rows = []
    for path in sorted((root / "eval").glob("*/*/answers.jsonl")):
        answers = [a for a in store.read_jsonl(path, AnswerRecord) if a.context_total is not None]
        if not answers:
            continue
        shown = sum(a.context_shown or 0 for a in answers)
        total = sum(a.context_total or 0 for a in answers)
        cut = sum((a.context_shown or 0) < (a.context_total or 0) for a in answers)
        counters = sorted({a.token_counter or "?" for a in answers})
        first = answers[0]
        rows.append(
            Truncation(first.model, first.context, len(answers), cut, shown, total, ", ".join(counters))
        )
    return sorted(rows, key=lambda t: (t.model, report_order(t.context)))


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _point_cells(p: Point, front: set[str]) -> list[str]:
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(p.offences.items())) or "none"
    return [
        p.model,
        p.context,
        _num(p.personalisation),
        _num(p.privacy),
        f"{p.scored} ({p.privacy_errors} errors, {p.failed_answers} no answer)",
        p.region or "–",
        "yes" if p.label in front else "",
        kinds,
    ]


POINT_HEADER = [
    "model",
    "context",
    "personalisation Avg",
    "privacy",
    "privacy scored",
    "region",
    "Pareto",
    "offences",
]
TRUNC_HEADER = [
    "model",
    "context",
    "answers",
    "truncated logs",
    "records shown / total",
    "dropped",
    "token counter",
]


def _trunc_cells(t: Truncation) -> list[str]:
    return [
        t.model,
        t.context,
        str(t.answers),
        f"{t.truncated} of {t.answers}",
        f"{t.shown} / {t.total}",
        f"{t.dropped_share:.1%}",
        t.counter,
    ]


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return out + ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]


def render_markdown(points: Sequence[Point], truncation: Sequence[Truncation]) -> str:
    if not points and not truncation:
        return ""
    front = {p.label for p in pareto_front(points)}
    lines = ["", "## Privacy x personalisation", ""]
    lines.append(f"Privacy 1–5 (5 = no offence); regions cut at {CUT} on both axes.")
    lines += ["", *_md_table(POINT_HEADER, [_point_cells(p, front) for p in points])]
    if truncation:
        lines += ["", "## Truncated logs", ""]
        lines.append("A log that does not fit the answer model's window keeps its newest records.")
        lines += ["", *_md_table(TRUNC_HEADER, [_trunc_cells(t) for t in truncation])]
    return "\n".join(lines) + "\n"


def _xy(points: Sequence[Point]) -> tuple[list[float], list[float]]:
    return [p.personalisation or 0.0 for p in points], [p.privacy or 0.0 for p in points]


def quadrant_svg(points: Sequence[Point]) -> str:
    """The scatter with the 3.0 cuts, region names and the Pareto front, as inline SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [p for p in points if p.personalisation is not None and p.privacy is not None]
    front = pareto_front(shown)
    with plt.rc_context({"text.usetex": False, "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(7, 5.5))
        ax.set_xlim(1, 5)
        ax.set_ylim(1, 5)
        ax.axvline(CUT, color="#888", lw=1, ls="--")
        ax.axhline(CUT, color="#888", lw=1, ls="--")
        for (x, y), name in {
            (4.0, 4.8): "Balanced",
            (4.0, 1.2): "Aggressive",
            (2.0, 4.8): "Conservative",
            (2.0, 1.2): "Ineffective",
        }.items():
            ax.text(x, y, name, ha="center", color="#666", parse_math=False)
        ax.scatter(*_xy(shown), color="#1f77b4", zorder=3)
        for p in shown:
            ax.annotate(
                p.label.replace("$", r"\$"),
                (p.personalisation or 0, p.privacy or 0),
                fontsize=7,
                xytext=(4, 4),
                textcoords="offset points",
            )
        if front:
            ax.plot(
                *_xy(front),
                color="#d62728",
                lw=1.5,
                label="Pareto front",
            )
            ax.legend(loc="lower left")
        ax.set_xlabel("personalisation (mean Avg of PC, PD)")
        ax.set_ylabel("privacy (1-5, 5 = no offence)")
        ax.set_title("Privacy vs personalisation")
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
        plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(points: Sequence[Point], truncation: Sequence[Truncation]) -> str:
    if not points and not truncation:
        return ""
    front = {p.label for p in pareto_front(points)}
    parts = ['<section id="lunar-privacy"><h2>Privacy x personalisation</h2>']
    if points:
        parts.append(f'<div class="chart">{quadrant_svg(points)}</div>')
        parts.append(_html_table(POINT_HEADER, [_point_cells(p, front) for p in points]))
    if truncation:
        parts.append("<h3>Truncated logs</h3>")
        parts.append(_html_table(TRUNC_HEADER, [_trunc_cells(t) for t in truncation]))
    parts.append("</section>")
    return "".join(parts)


def privacy_section(root: Path) -> tuple[str, str]:
    """(markdown, html) of this section for report.md and report.html; empty when nothing was judged."""
    points, truncation = privacy_points(root), truncation_rows(root)
    return render_markdown(points, truncation), render_html(points, truncation)
