"""Every name is data in every output (issue 23, item 7, the escaping half; review 3, D9).

``eval --model 'openai:![p](http://evil.example/pixel.png)[Click](http://evil.example/phish)'``
made ``report.md`` show 16 remote images and 16 live links once rendered. The
class: model, measure, option and dataset names of any length in any Unicode,
built from Markdown link, image, reference and autolink syntax, raw HTML,
entities, bidi controls, terminal escapes and line breaks. Each goes through
the real writers (``md_text``/``md_cell``, the Hugging Face card, ``csv_text``,
``strip_control``) and is read back by independent parsers: markdown-it
(CommonMark + tables), Python's ``html.parser``, a regex for the bare URLs
GitHub autolinks, and ``csv``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from helpers.cli import run_recworld
from helpers.security.fake_server import serve
from recworld.console.terminal import strip_control
from recworld.csvsafe import csv_text
from recworld.mdsafe import md_cell, md_text

ATOMS = [
    "[Click](http://evil.example/phish)",
    "![p](http://evil.example/pixel.png)",
    "[ref]",
    "[ref]: http://evil.example/def",
    "[x][ref]",
    "[x][]",
    "](",
    "![",
    "[",
    "]",
    "(http://evil.example)",
    "<http://evil.example>",
    "<a href=http://evil.example>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(9)>",
    "<!-- c -->",
    "&lt;b&gt;",
    "&#60;img src=x&#62;",
    "&amp;",
    "http://evil.example/x",
    "https://evil.example",
    "ftp://evil.example",
    "www.evil.example",
    "WWW.Evil.Example",
    "mail@evil.example",
    "javascript:alert(1)",
    "\\",
    "\\[",
    "\\](x)",
    "*a*",
    "**b**",
    "|",
    "\\|",
    "!",
    "#",
    "> q",
    "- li",
    "1. li",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\x1b]0;PWN\x07",
    "\x1b[2J",
    "\x00",
    "\x9b31m",
    "\u202e",
    "\u2066",
    "\u200b",
    "e\u0301",
    "🚀",
    "日本",
    "ﷺ",
    "$x$",
    "{{7*7}}",
    "%s",
    '=HYPERLINK("http://evil.example")',
    "+1",
    "-2",
    "@x",
]
NAMES = st.lists(st.sampled_from(ATOMS) | st.text(max_size=6), min_size=1, max_size=10).map(
    "".join
) | st.builds(lambda atom, n: atom * n, st.sampled_from(ATOMS), st.integers(20, 150))

QUICK = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)  # no slow "explain" phase on a failure
# A bare URL, www. name or address that GitHub (cmark-gfm autolinks) would link, unbroken by a backslash.
BARE_LINK = re.compile(r"(?i)(?:https?|ftp)://|\bwww\.|[\w.+-]@[\w-]+\.[\w-]")
# Markdown's own structure (our headings and tables; a line break in md_text text can start a list): no link,
# image, embed or attribute among them.
STRUCTURE = {"table", "thead", "tbody", "tr", "th", "td", "p", "code", "em", "strong", "br", "pre", "hr"}
ALLOWED_TAGS = STRUCTURE | {"h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote"}


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.cells: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def render(markdown: str) -> Page:
    from markdown_it import MarkdownIt

    page = Page()
    page.feed(MarkdownIt("commonmark").enable("table").render(markdown))
    return page


def assert_inert(markdown: str) -> Page:
    """Only Markdown's own structure: no attribute (href, src, on*), no bare link a viewer would make."""
    page = render(markdown)
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS, page.tags
    assert all(not attrs for tag, attrs in page.tags if tag not in ("td", "th", "ol")), page.tags
    assert all(name in ("style", "start") for _t, attrs in page.tags for name, _v in attrs), page.tags
    assert not BARE_LINK.search(markdown), markdown
    return page


def shown(name: str) -> str:
    """What a name should read as: its text without controls or bidi overrides, on one line."""
    text = re.sub(
        "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", "", re.sub(r"\r\n|\r|\n", " ", name)
    )
    return " ".join(text.split())


@settings(max_examples=150, deadline=None, phases=QUICK)
@given(NAMES)
def test_a_name_in_a_markdown_table_cell_is_inert_and_reads_as_typed(name: str) -> None:
    page = assert_inert(f"| name | n |\n| --- | --- |\n| {md_cell(name)} | 1 |\n")
    assert len(page.cells) == 2 and page.cells[1] == "1"  # no extra column came from the name
    if "`" not in name and "_" not in name:  # a code span or _emphasis_ changes the look, not the safety
        assert " ".join(page.cells[0].split()) == shown(name)


@settings(max_examples=100, deadline=None, phases=QUICK)
@given(NAMES, NAMES)
def test_names_in_markdown_text_are_inert_even_side_by_side(first: str, second: str) -> None:
    """Two names next to each other (a list of skipped runs, a heading and its note) make no link together."""
    assert_inert(f"Skipped: {md_text(first)}, {md_text(second)}\n\n## {md_text(first)}{md_text(second)}\n")


def test_d9_the_review_model_name_is_text() -> None:
    name = "openai:![p](http://evil.example/pixel.png)[Click for results](http://evil.example/phish)"
    page = assert_inert(f"# {md_text(name)}\n\n| {md_cell(name)} |\n| --- |\n| {md_cell(name)} |\n")
    assert page.cells == [name]


@settings(max_examples=100, deadline=None, phases=QUICK)
@given(NAMES)
def test_a_name_in_a_csv_cell_is_data_for_a_spreadsheet(name: str) -> None:
    (row,) = list(csv.reader(io.StringIO(csv_text([[name, 1]]), newline="")))
    cell = row[0]
    assert cell in (name, "'" + name)
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or re.fullmatch(
        r"[+-]?[\d.]+(e[+-]?\d+)?", cell
    )


@settings(max_examples=100, deadline=None, phases=QUICK)
@given(NAMES)
def test_a_name_on_the_terminal_carries_no_control(name: str) -> None:
    text = strip_control(name)
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)


@pytest.fixture(scope="module")
def loaded_suite(evil_suite: Path) -> Any:
    from recworld.export.common import load_suite

    return load_suite(evil_suite)


@settings(max_examples=40, deadline=None, phases=QUICK)
@given(dataset=NAMES)
def test_a_dataset_name_in_the_hugging_face_card_is_inert(loaded_suite: Any, dataset: str) -> None:
    from recworld.export.hf import card

    suite = dataclasses.replace(
        loaded_suite, manifest=loaded_suite.manifest.model_copy(update={"dataset": dataset})
    )
    meta = {
        "suite": {"fingerprint": dataset, "seed": 0, "built_by": dataset, "generator": dataset},
        "recworld_version": "0",
    }
    body = card(suite, meta).split("\n---", 1)[1]  # the Markdown after the YAML header
    assert_inert(body.replace("`", ""))  # the fingerprint's code span aside: the rest is plain text


def test_d9_report_md_shows_no_remote_image_and_no_link(evil_suite: Path, work: Path) -> None:
    """The review's case end to end: the hostile model name through eval and report."""
    suite = work / "suite"
    shutil.copytree(evil_suite, suite, symlinks=True)
    model = "openai:![p](http://evil.example/pixel.png)[Click for results](http://evil.example/phish)"
    with serve("ok", "A") as server:
        argv = ["eval", suite, "--model", model, "--base-url", server.url, "--limit", "2", "--no-progress"]
        ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr
    assert run_recworld("report", suite).returncode == 0
    markdown = (suite / "report" / "report.md").read_text(encoding="utf-8")
    page = render(markdown)
    assert not [t for t, _ in page.tags if t in ("a", "img")]
    assert not [attrs for _t, attrs in page.tags if any(k in ("href", "src") for k, _v in attrs)]
    assert "evil.example" in markdown  # the name is there, as text
