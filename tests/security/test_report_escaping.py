"""Text that leaves in a report: HTML, Markdown, a small viewer (review cases X1, X2, X5, X8, X9, E13).

The review's hostile run: the evil suite's titles, a genre ``<b>Genre</b>``, a
model named ``openai:<svg onload=alert(9)>$x$=cmd`` whose every reply is
``</script><img src=x onerror=alert(1)> A`` (fake-server mode ``xss``). Its
``report.md``, rendered by ``markdown-it-py`` (CommonMark, as GitHub and most
viewers do), carried 28 live ``<svg onload>`` elements (F16). Here every
element of the rendered Markdown and of ``report.html`` is parsed and none may
carry an event handler or be a script the template did not write.
"""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from helpers.cli import run_recworld
from helpers.security.fake_server import MiB, serve
from recworld.mdsafe import md_cell, md_text
from recworld.report.viewer import MAX_REPLY_CHARS

MODEL = "openai:<svg onload=alert(9)>$x$=cmd"
REPLY = "</script><img src=x onerror=alert(1)> A"


class Elements(HTMLParser):
    """Every start tag of a page, with its attributes; the body of each ``<script>`` too."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        (self.scripts if self._in_script else self.text).append(data)


def parse(html: str) -> Elements:
    page = Elements()
    page.feed(html)
    return page


def handlers(page: Elements) -> list[str]:
    return [
        f"<{tag} {name}=...>" for tag, attrs in page.tags for name in attrs if name.lower().startswith("on")
    ]


@pytest.fixture(scope="module")
def hostile_report(evil_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The evil suite with one run by the hostile model, and its report (written once)."""
    suite = tmp_path_factory.mktemp("hostile") / "suite"
    shutil.copytree(evil_suite, suite, symlinks=True)
    with serve("xss", REPLY) as server:
        argv = [
            "eval",
            str(suite),
            "--model",
            MODEL,
            "--base-url",
            server.url,
            "--limit",
            "5",
            "--no-progress",
        ]
        ran = run_recworld(*argv)
        assert ran.returncode == 0, ran.stderr
    ran = run_recworld("report", str(suite))
    assert ran.returncode == 0, ran.stderr
    return suite / "report"


def test_x2_report_md_renders_no_live_html(hostile_report: Path) -> None:
    from markdown_it import MarkdownIt

    source = (hostile_report / "report.md").read_text(encoding="utf-8")
    assert "<svg onload" not in source and "<img src=x onerror" not in source
    rendered = MarkdownIt("commonmark").enable("table").render(source)
    page = parse(rendered)
    assert handlers(page) == []
    markdown_tags = {"h1", "h2", "h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td", "em", "strong"}
    assert {tag for tag, _ in page.tags} <= markdown_tags | {"blockquote", "code", "a", "ul", "li", "br"}
    shown = "".join(page.text)
    assert "<svg onload=alert(9)>$x$=cmd" in shown  # the model's name, as typed
    if "&lt;img src=x onerror" in source:  # a hostile title in a case study: shown as typed
        assert "<img src=x onerror=alert(1)>" in shown


def test_x1_report_html_escapes_every_text(hostile_report: Path) -> None:
    html = (hostile_report / "report.html").read_text(encoding="utf-8")
    page = parse(html)
    assert handlers(page) == []
    scripts = [attrs.get("type") for tag, attrs in page.tags if tag == "script"]
    assert all(kind in (None, "application/json") for kind in scripts)
    for body in page.scripts:
        assert "</script" not in body.lower() and "<img" not in body
    data = [json.loads(body) for (tag, attrs), body in zip(
        [(t, a) for t, a in page.tags if t == "script"], page.scripts, strict=False
    ) if attrs.get("type") == "application/json"]  # fmt: skip
    replies = [row["reply"] for d in data for cell in d["cells"].values() for row in cell["rows"]]
    assert REPLY in replies  # reaches the viewer whole, as data, shown through textContent


def test_x5_latex_in_a_model_name_is_shown_as_typed(hostile_report: Path) -> None:
    """``$x$`` in the model's name (and ``$\\frac{a}{b}$`` titles): no crash, no math rendering, as typed."""
    from markdown_it import MarkdownIt

    html = "".join(parse((hostile_report / "report.html").read_text(encoding="utf-8")).text)
    markdown = MarkdownIt("commonmark").enable("table").render((hostile_report / "report.md").read_text())
    assert "$x$=cmd" in html and "$x$=cmd" in "".join(parse(markdown).text)


@pytest.mark.parametrize("title", ["{{7*7}} {0} ${x} %s", "$\\frac{a}{b}$", "%(name)s {name!r} ${HOME}"])
def test_x9_template_like_titles_reach_the_prompt_literally(evil_suite: Path, title: str) -> None:
    from recworld.lrworld.prompts import render_prompt
    from recworld.lrworld.schema import Question

    line = (evil_suite / "questions" / "kg_movie_genre.jsonl").read_text().splitlines()[0]
    question = Question.model_validate_json(line)
    history = [question.history[0].model_copy(update={"text": title}), *question.history[1:]]
    prompt = render_prompt(question.model_copy(update={"history": history}))
    content = "".join(m.content for m in prompt.messages)
    assert title in content and "49" not in content.replace(question.history[0].text, "")


def test_x8_a_bidi_override_is_data_not_markup(hostile_report: Path) -> None:
    """Noted by the review, not counted: U+202E reorders display only; it is kept as the title's text."""
    html = (hostile_report / "report.html").read_text(encoding="utf-8")
    assert handlers(parse(html)) == []
    questions = "".join(p.read_text() for p in (hostile_report.parent / "questions").glob("*.jsonl"))
    if "\\u202e" in questions or "\u202e" in questions:
        assert "\u202e" in html


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("<svg onload=alert(9)>", "&lt;svg onload=alert(9)&gt;"),
        ("a|b", "a\\|b"),
        ("**bold**", "\\*\\*bold\\*\\*"),
        ("x\\", "x\\\\"),
        ("&amp;", "&amp;amp;"),
        ("\x1b]0;TITLE\x07ok", "]0;TITLEok"),
        ("kg_movie_genre 0.300 [0.166, 0.465]", "kg_movie_genre 0.300 [0.166, 0.465]"),
    ],
)
def test_md_text(text: str, shown: str) -> None:
    assert md_text(text) == shown
    assert md_cell(f"{text}\nnext") == f"{shown} next"


def test_e13_long_replies_are_cut_in_the_viewer_and_whole_in_the_samples(
    evil_suite: Path, tmp_path: Path, key_env: str
) -> None:
    """F13: 15 MiB replies under the cap made a 189 MB report.html for 12 samples (scaled down: 1 MiB x 4)."""
    suite = tmp_path / "suite"
    shutil.copytree(evil_suite, suite, symlinks=True)
    with serve("huge_ok", "1") as server:
        argv = [
            "eval",
            suite,
            "--model",
            "openai:huge",
            "--base-url",
            server.url,
            "--limit",
            "2",
            "--no-progress",
        ]
        ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr
    (samples_file,) = (suite / "runs").glob("*/samples.jsonl")
    replies = [json.loads(line)["response"] for line in samples_file.read_text().splitlines()]
    assert len(replies) == 4 and all(len(r) > MiB - 100 for r in replies)  # samples.jsonl keeps them whole
    assert run_recworld("report", suite).returncode == 0
    html = (suite / "report" / "report.html").read_text(encoding="utf-8")
    assert len(html.encode()) < 2 * MiB < len(samples_file.read_bytes())  # no reply embedded whole
    cut = [m for m in re.findall(r'"reply":"((?:[^"\\]|\\.)*)"', html) if "cut:" in m]
    assert len(cut) == 4 and all(len(m) < MAX_REPLY_CHARS + 200 for m in cut)
    assert "the whole text is in samples.jsonl" in cut[0]
