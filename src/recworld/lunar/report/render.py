"""The renderings of a :class:`~recworld.lunar.report.model.LunarReport`: Markdown and HTML.

Each reads the model only; none computes a number of its own. report.html is one
self-contained file: inline CSS, inline SVG, and one inline script (the sample
viewer), with nothing loaded from elsewhere. Every text is escaped by the template
(jinja2 autoescape); the viewer shows model text through ``textContent`` only.
In report.md every piece of text goes through :mod:`recworld.mdsafe` (model names,
titles and notes carry data: no HTML, emphasis or table break from them).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from recworld import __version__
from recworld.lunar.report.model import LunarReport
from recworld.lunar.report.parts import Section, Table
from recworld.mdsafe import md_cell, md_text

if TYPE_CHECKING:
    from markupsafe import Markup

__all__ = ["to_html", "to_markdown"]


def md_table(table: Table) -> list[str]:
    lines = [f"**{md_text(table.title)}**", ""]
    lines.append("| " + " | ".join(md_cell(c) for c in table.columns) + " |")
    lines.append("|" + " --- |" * len(table.columns))
    lines += ["| " + " | ".join(md_cell(c.text) for c in row) + " |" for row in table.rows]
    if table.caption:
        lines += ["", md_text(table.caption)]
    return [*lines, ""]


def _md_section(section: Section, level: int) -> list[str]:
    lines = [f"{'#' * level} {md_text(section.title)}", ""]
    if section.intro:
        lines += [md_text(section.intro), ""]
    lines += [f"> {md_text(note)}\n" for note in section.notes]
    if section.empty:
        lines += [f"> {md_text(section.empty)}", ""]
    for table in section.tables:
        lines += md_table(table)
    for figure in section.figures:
        lines += [f"*Figure (in report.html): {md_text(figure.caption)}*", ""]
    for sub in section.subsections:
        lines += _md_section(sub, level + 1)
    return lines


def to_markdown(report: LunarReport) -> str:
    lines = [f"# {md_text(report.title)}", ""]
    lines += [f"- **{md_text(name)}**: {md_text(value)}" for name, value in report.facts]
    lines.append("")
    for section in report.sections:
        lines += _md_section(section, 2)
    lines += ["## Method", "", md_text(report.method), ""]
    return "\n".join(lines)


def code_spans(text: str) -> Markup:
    """``text`` escaped, with its `backquoted` spans (commands to run) as ``<code>``."""
    from markupsafe import Markup, escape

    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def to_html(report: LunarReport) -> str:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("recworld.lunar.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["code"] = code_spans
    return env.get_template("report.html.j2").render(report=report, version=__version__)
