"""report.html through the report kit: one jinja environment, one page frame, one set of macros.

A report made of sections only renders as the kit's ``document.html.j2`` (LUNAR's);
a report with its own layout (LRWorld's, in its package's ``templates/``) extends
``page.html.j2`` (styles, the sample viewer, the footer) and imports its macros
from ``kit.html.j2`` (a :class:`~recworld.reportkit.parts.Table`, a section's
figures, a :class:`~recworld.reportkit.parts.Section`). The page is one
self-contained file: inline CSS, inline SVG and one inline script, nothing loaded
from elsewhere. Every text is escaped by jinja's autoescape; the viewer shows
model text through ``textContent`` only.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

__all__ = ["KIT", "code_spans", "environment", "render_page"]

KIT = "recworld.reportkit"  # the package whose templates/ every page falls back on


def code_spans(text: str) -> Markup:
    """``text`` escaped, with its `backquoted` spans (commands to run) as ``<code>``."""
    from markupsafe import Markup, escape

    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


@cache
def environment(package: str) -> jinja2.Environment:
    """The templates of ``package`` (its ``templates/`` folder), then the kit's own."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [
                jinja2.PackageLoader(package, "templates"),
                jinja2.PackageLoader(KIT, "templates"),
            ]
        ),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["code"] = code_spans
    return env


def render_page(template: str, *, package: str = KIT, **context: Any) -> str:
    """The page ``template`` (``package``'s, else the kit's) rendered with ``context``.

    Every page takes ``title``, ``viewer`` (a :class:`~recworld.reportkit.viewer.Viewer`,
    or None) and ``footer``. The kit's ``document.html.j2`` is a whole report made of
    :class:`~recworld.reportkit.parts.Section` values: it also takes ``facts`` (name,
    value pairs), ``sections`` and ``method``.
    """
    return environment(package).get_template(template).render(**context)
