"""Every id in one report page is unique, whatever the datasets are called.

Dataset names are drawn from an alphabet whose characters the slug rule folds
together (``ml.100k``, ``ml-100k``, ``ml 100k``, ``ml_100k``), so two names often
slug alike. The checker reads every ``id="..."`` of the HTML, the charts' inner
SVG ids included, with its own regular expression.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.synthetic_runs import MOVIE_MEASURES, make_suite, skilled, write_run
from recworld.paths import slug, unique_slugs
from recworld.report.analysis import AnalysisOptions
from recworld.report.model import build_report
from recworld.report.render import to_html
from recworld.report.runs import label_runs, load_run

NAME = st.text(st.sampled_from("ml1.- _/"), min_size=1, max_size=5).filter(lambda s: s.strip())
NAMES = st.lists(NAME, min_size=2, max_size=3, unique=True)
ID = re.compile(r'\bid="([^"]*)"')


@settings(max_examples=40, deadline=None)
@given(names=st.lists(NAME, min_size=1, max_size=8))
def test_unique_slugs_are_unique_and_slug_each_name(names: list[str]) -> None:
    keys = unique_slugs(names)
    assert set(keys) == set(names)
    assert len(set(keys.values())) == len(keys)
    for name, key in keys.items():
        assert key == slug(name) or re.fullmatch(re.escape(slug(name)) + r"-\d+", key)


@settings(max_examples=4, deadline=None)
@given(names=NAMES)
def test_no_two_ids_in_a_page_are_equal(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = make_suite(Path(tmp)) / "runs"
        dirs = []
        for i, name in enumerate(names):
            for model, p in (("itemknn", 0.7), ("popularity", 0.3)):
                run = runs / f"{i}-{model}"
                write_run(run, model=model, dataset=name, measures=MOVIE_MEASURES[:2], policy=skilled(p), n=8)
                dirs.append(run)
        loaded = [load_run(d) for d in dirs]
        label_runs(loaded)
        page = to_html(build_report(loaded, [], AnalysisOptions()))
    ids = ID.findall(page)
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, repeated
    for key in unique_slugs(names).values():  # each dataset's own section and tables are there
        assert {f"ds-{key}", f"main-{key}", f"missed-{key}"} <= set(ids)
