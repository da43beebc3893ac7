"""report.html: the markdown report as preformatted text, then each section's HTML."""

from __future__ import annotations

import html


def html_page(markdown: str, sections: list[str]) -> str:
    """report.html: the markdown report as preformatted text, then each section's HTML tables.

    Static and self-contained (no script, no external resource); other report sections
    add their HTML to ``sections``.
    """
    body = "".join(s for s in sections if s)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>LUNAR report</title>'
        "<style>body{font-family:sans-serif;max-width:70rem;margin:auto;padding:1rem}"
        "table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #888;padding:.2rem .5rem}"
        "pre{white-space:pre-wrap}</style></head><body><h1>LUNAR report</h1>"
        f"<pre>{html.escape(markdown)}</pre>{body}</body></html>\n"
    )
