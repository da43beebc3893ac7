"""report.md is the kit's rendering of the sections report.html shows, and it loses nothing.

The checks walk the :class:`ReportModel` itself (not the section list the renderers share)
and read the Markdown back with their own unescaping, so they share no code with the renderer.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.synthetic_runs import MOVIE_MEASURES, always_first, make_suite, perfect, skilled, write_run
from recworld.paths import slug
from recworld.report.analysis import AnalysisOptions
from recworld.report.model import ReportModel, build_report
from recworld.report.render import METHOD, to_html, to_markdown
from recworld.report.runs import label_runs, load_run
from recworld.reportkit import Section, Table

MEASURES = MOVIE_MEASURES[:4]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> ReportModel:
    runs = make_suite(tmp_path_factory.mktemp("layout")) / "runs"
    d, m = "ml-100k", MEASURES
    write_run(runs / "knn", model="itemknn", dataset=d, measures=m, policy=skilled(0.7), n=30, seed=1)
    write_run(runs / "pop", model="popularity", dataset=d, measures=m, policy=skilled(0.3), n=30, seed=2,
              errors=2)  # fmt: skip
    write_run(runs / "oracle", model="oracle", dataset=d, measures=m, policy=perfect(), n=30)
    write_run(runs / "smol", model="llamacpp:smollm2-135m", dataset=d, measures=m, policy=always_first(), n=2)
    write_run(runs / "cot", model="itemknn", dataset=d, measures=m, policy=skilled(0.6), n=5, seed=5,
              variant="cot")  # fmt: skip
    loaded = [load_run(runs / name) for name in ("knn", "pop", "oracle", "smol", "cot")]
    label_runs(loaded)
    return build_report(loaded, ["unfinished"], AnalysisOptions())


def _plain(markdown: str) -> str:
    """Markdown source as the text a reader sees: backslash escapes and entities undone."""
    return html.unescape(re.sub(r"\\(.)", r"\1", markdown))


def _rows(markdown: str) -> set[tuple[str, ...]]:
    rows = set()
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
            rows.add(tuple(_plain(c.strip()).removeprefix("**").removesuffix("**") for c in cells))
    return rows


def _tables_of(section: Section) -> Iterator[Table]:
    yield from section.tables
    for sub in section.subsections:
        yield from _tables_of(sub)


def _texts_of(section: Section) -> Iterator[str]:
    yield from (section.title, section.intro, section.empty, *section.notes)
    yield from (f.caption for f in section.figures)
    for sub in section.subsections:
        yield from _texts_of(sub)


def _model_tables(model: ReportModel) -> list[Table]:
    tables: list[Table] = []
    for ds in model.datasets:
        tables.append(ds.main)
        for panel in ds.aggregates:
            tables += [panel.scales, panel.factors]
        tables += [t for t in (ds.missed, ds.errors, ds.paired) if t is not None]
    tables += [panel.table for panel in model.positions]
    for section in model.analyses:
        tables += list(_tables_of(section))
    return [*tables, model.details]


def test_every_number_and_caption_of_the_model_is_in_report_md(model: ReportModel) -> None:
    markdown = to_markdown(model)
    plain, rows = _plain(markdown), _rows(markdown)
    tables = _model_tables(model)
    assert len(tables) >= 8 and any(ds.paired is not None for ds in model.datasets)
    for table in tables:
        assert table.title in plain and table.caption in plain, table.key
        assert tuple(table.columns) in rows, table.key
        for row in table.rows:
            assert tuple(c.text for c in row) in rows, (table.key, [c.text for c in row])
    texts = [model.title, model.subtitle, *model.skipped, *(n for ds in model.datasets for n in ds.notes)]
    texts += [t for section in model.analyses for t in _texts_of(section)]
    for text in texts:
        assert " ".join(text.split()) in plain, text
    assert METHOD in plain
    assert "Click a score" not in markdown  # a Markdown reader has no sample viewer


def test_report_md_has_the_sections_of_report_html_in_its_order(model: ReportModel) -> None:
    page = to_html(model)
    heads = [html.unescape(h) for h in re.findall(r"<h[2-6]>(.*?)</h[2-6]>", page)]
    markdown = to_markdown(model)
    md_heads = [_plain(h) for h in re.findall(r"^#{2,6} (.*)$", markdown, flags=re.MULTILINE)]
    assert [h for h in md_heads if h in heads] == heads  # every section, in the page's order
    assert "Runs" in heads and md_heads.count("Runs") == 1  # a table titled as its section: once


def test_datasets_get_the_one_slug_and_distinct_ids(tmp_path: Path) -> None:
    """Section ids come from ``recworld.paths.slug``: ``ml.100k`` and ``ml-100k`` no longer share one."""
    runs = make_suite(tmp_path) / "runs"
    for name in ("ml.100k", "ml-100k"):
        write_run(runs / name, model="itemknn", dataset=name, measures=MEASURES, policy=skilled(0.7), n=10)
    loaded = [load_run(runs / name) for name in ("ml.100k", "ml-100k")]
    label_runs(loaded)
    page = to_html(build_report(loaded, [], AnalysisOptions()))
    # The page's own ids (the charts' inner SVG ids are prefixed by recworld.svg, apart).
    ids = re.findall(r'\bid="([^"]+)"', re.sub(r"<svg\b.*?</svg>", "", page, flags=re.DOTALL))
    assert {f"ds-{slug(n)}" for n in ("ml.100k", "ml-100k")} <= set(ids)
    assert [i for i in ids if i.startswith("ds-")] == ["ds-ml.100k", "ds-ml-100k"]
    assert len(ids) == len(set(ids))
