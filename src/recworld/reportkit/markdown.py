"""A table and a section as GitHub-flavoured Markdown: the one Markdown renderer of the report kit.

Every text from data (titles, names, cells, captions, notes) goes through
:mod:`recworld.mdsafe`: it renders as typed, never as HTML, a link or a table break.
"""

from __future__ import annotations

from collections.abc import Sequence

from recworld.mdsafe import md_cell, md_text
from recworld.reportkit.parts import DASH, Section, Table

__all__ = ["document_markdown", "section_markdown", "table_markdown"]


def table_markdown(table: Table, *, heading: str | None = "###") -> str:
    """The table under its title, its column groups as the first (italic) body row, then its caption.

    ``heading`` is the title's Markdown heading ("###", or "##" for a table that is its
    own section); "" writes the title as a bold line (a table inside a titled section),
    None no title (the heading above already says it).
    Text columns are left-aligned, numbers right-aligned; a bold cell is the best of its column.
    """
    title = md_text(table.title)
    lines = [] if heading is None else [f"{heading} {title}" if heading else f"**{title}**", ""]
    lines.append("| " + " | ".join(md_cell(c) for c in table.columns) + " |")
    aligns = [" --- "] * table.left + [" ---: "] * (len(table.columns) - table.left)
    lines.append("|" + "|".join(aligns) + "|")
    if table.groups:
        groups = ["*scale*"]
        for name, span in table.groups:
            groups += [f"*{md_cell(name)}*"] + [""] * (span - 1)
        lines.append("| " + " | ".join(groups) + " |")
    for row in table.rows:
        texts = [f"**{md_cell(c.text)}**" if c.bold and c.text != DASH else md_cell(c.text) for c in row]
        lines.append("| " + " | ".join(texts) + " |")
    lines.append("")
    if table.caption:
        lines += [f"*{md_text(table.caption)}*", ""]
    return "\n".join(lines)


def section_markdown(section: Section, level: int = 2, *, table_heading: str | None = None) -> str:
    """The section's heading, intro, notes (quoted), why it is empty, tables, figure captions, subsections.

    Tables are headed ``table_heading`` (:func:`table_markdown`); None heads them one level
    below the section. A table titled as its section is not titled again. A figure is in
    report.html only: Markdown names it by its caption.
    """
    heading = "#" * (level + 1) if table_heading is None else table_heading
    lines = [f"{'#' * level} {md_text(section.title)}", ""]
    if section.intro:
        lines += [md_text(section.intro), ""]
    lines += [f"> {md_text(note)}\n" for note in section.notes]
    if section.empty:
        lines += [f"> {md_text(section.empty)}", ""]
    for table in section.tables:
        lines.append(table_markdown(table, heading=None if table.title == section.title else heading))
    lines += [f"*Figure (in report.html): {md_text(f.caption)}*\n" for f in section.figures if f.caption]
    lines += [section_markdown(s, level + 1, table_heading=table_heading) for s in section.subsections]
    return "\n".join(lines)


def document_markdown(
    title: str,
    sections: Sequence[Section],
    *,
    lead: str = "",
    facts: Sequence[tuple[str, str]] = (),
    notes: Sequence[str] = (),
    method: str = "",
    table_heading: str | None = "",
) -> str:
    """A report made of sections (the Markdown twin of ``document.html.j2``).

    Its title, lead line, facts, notes to read first (quoted), sections and method. Its
    tables are titled ``table_heading`` (:func:`section_markdown`): in bold inside their
    sections by default, None for a heading one level below each section.
    """
    lines = [f"# {md_text(title)}", ""]
    if lead:
        lines += [md_text(lead), ""]
    lines += [f"- **{md_text(name)}**: {md_text(value)}" for name, value in facts]
    lines.append("")
    lines += [f"> {md_text(note)}\n" for note in notes]
    lines += [section_markdown(section, 2, table_heading=table_heading) for section in sections]
    if method:
        lines += ["## Method", "", md_text(method), ""]
    return "\n".join(lines)
