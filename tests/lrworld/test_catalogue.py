"""Measures are declared once: each entry carries, or its builder family declares, everything about it.

For every measure of the catalogue: a report label, a prompt template, whether
it uses images; and from its builder family a brute-force check
(``test_builders.py``), an oracle that recomputes its ground truth, and the
case study's candidate scores. Each test here is parametrised over the
catalogue, so a new measure is checked without anyone adding it to a list,
and one that lacks any of these fails.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import typing
from functools import cache
from importlib import resources
from pathlib import Path

import pytest

from helpers.lrworld.catalogue_data import dataset_for
from helpers.lrworld.checks import FAST_NEUMF
from recworld.baselines import OracleBaseline
from recworld.chat import Request
from recworld.data.dataset import Dataset
from recworld.domain import Domain
from recworld.evaluation.questions import load_questions
from recworld.lrworld.catalogue import MEASURES, MEASURES_BY_ID
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.measure import BuilderSpec
from recworld.lrworld.prompts import LETTERS, VARIANTS, get_variant
from recworld.lrworld.schema import Question
from recworld.lrworld.suite import build_suite
from recworld.models import ModelConfig
from recworld.report.suite_data import SuiteData, candidate_scores

MEASURE_DOMAINS = [(m.id, d) for m in MEASURES for d in sorted(m.domains)]
IDS = [f"{m}-{d}" for m, d in MEASURE_DOMAINS]

_LOADED = """
import json, sys
import {module}
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("module", ["recworld.scoring", "recworld.lrworld.catalogue", "recworld.lrworld"])
def test_reading_the_catalogue_loads_no_loader_and_no_builder(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED.format(module=module)], capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(done.stdout))
    heavy = {"pandas", "scipy", "torch", "sklearn", "pyarrow"} & loaded
    assert not heavy, f"import {module} loads {sorted(heavy)}"
    forbidden = sorted(
        m
        for m in loaded
        if m.startswith(("recworld.data", "recworld.mining", "recworld.lrworld.builders", "recworld.models"))
    )
    assert not forbidden, f"import {module} loads {forbidden}"


def test_every_measure_has_a_label_a_template_and_declares_its_images() -> None:
    labels = [m.label for m in MEASURES]
    assert all(label.strip() for label in labels) and len(set(labels)) == len(labels)
    folders = {get_variant(v).template_dir for v in VARIANTS}
    templates = resources.files("recworld.lrworld.templates")
    for measure in MEASURES:
        for folder in folders:
            assert templates.joinpath(folder, f"{measure.id}.txt").is_file(), (folder, measure.id)
        # A measure shown by image descriptions is the one the describe+image variant gives the image.
        assert measure.uses_images == ("image_description" in measure.requires), measure.id


# -- the family's oracle and case-study scores, on a small suite per domain ------------------------------


@cache
def _suite(domain: Domain, root: Path) -> Path:
    out = root / domain.value
    build_suite(dataset_for(domain), BuildConfig(per_measure=12, neumf=FAST_NEUMF), out)
    return out


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("catalogue")


def _questions(suite: Path, measure: str) -> list[Question]:
    questions = [q for q in load_questions(suite) if q.measure == measure]
    assert questions, f"the test data builds no {measure} question (tests/helpers/lrworld/catalogue_data.py)"
    return questions


@pytest.mark.parametrize(("measure", "domain"), MEASURE_DOMAINS, ids=IDS)
def test_the_oracle_recomputes_every_measure(suites: Path, measure: str, domain: Domain) -> None:
    suite = _suite(domain, suites)
    oracle = OracleBaseline(ModelConfig(suite_dir=suite))
    questions = _questions(suite, measure)
    hits = 0
    for q in questions:
        labels = tuple(LETTERS[: len(q.candidates)])
        answer = asyncio.run(oracle.complete(Request((), choices=labels, question=q.public)))
        hits += labels.index(answer.text) == q.answer_index
    assert hits == len(questions), f"oracle {hits}/{len(questions)} on {measure}"


@pytest.mark.parametrize(("measure", "domain"), MEASURE_DOMAINS, ids=IDS)
def test_the_case_study_scores_put_the_answer_on_top(suites: Path, measure: str, domain: Domain) -> None:
    suite = _suite(domain, suites)
    data = SuiteData(path=suite, dataset=Dataset.load(suite / "dataset"))
    for q in _questions(suite, measure):
        name, scores = candidate_scores(data, q)
        assert name and len(scores) == len(q.candidates)
        answer = scores[q.answer_index]
        assert answer is not None, (q.id, name)
        others = [s for i, s in enumerate(scores) if i != q.answer_index]
        assert all(s is None or s < answer for s in others), (q.id, name, scores)


def test_every_builder_family_is_used_and_exercised() -> None:
    """Each family of the closed BuilderSpec union has a measure, so its consumers are tested above."""
    families = set(typing.get_args(BuilderSpec))
    assert {type(m.builder) for m in MEASURES} == families
    assert all(MEASURES_BY_ID[m.id] is m for m in MEASURES)
