"""Every measure's questions checked against ground truth re-derived by brute force."""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import pytest

from helpers.lrworld.catalogue_data import dataset_for, music_dataset, product_dataset
from helpers.lrworld.checks import (
    Built,
    basic_checks,
    build,
    check_attribute,
    config,
    field_of,
    reference_check,
    sequences,
)
from helpers.lrworld.datasets import make_movie_dataset
from recworld.data.dataset import Dataset, Domain
from recworld.lrworld.builders.base import draw_distinct
from recworld.lrworld.catalogue import MEASURES, MEASURES_BY_ID, OptionKind
from recworld.lrworld.schema import Question
from recworld.seeding import rng


@cache
def built_for(domain: Domain) -> Built:
    """Every measure of ``domain`` built once on its test dataset."""
    return build(dataset_for(domain), config())


@pytest.fixture
def movie() -> Built:
    return built_for(Domain.MOVIE)


@pytest.fixture
def product() -> Built:
    return built_for(Domain.PRODUCT)


MEASURE_DOMAINS = [(m.id, d) for m in MEASURES for d in sorted(m.domains)]


@pytest.mark.parametrize(("measure", "domain"), MEASURE_DOMAINS, ids=[f"{m}-{d}" for m, d in MEASURE_DOMAINS])
def test_every_measure_matches_its_brute_force_reference(measure: str, domain: Domain) -> None:
    """Each measure, on each domain it applies to, against the reference of its builder family."""
    ctx, built = built_for(domain)
    questions = built.get(measure, [])
    assert questions, (
        f"the {domain} test data builds no {measure} question (tests/helpers/lrworld/catalogue_data.py)"
    )
    if domain is Domain.MOVIE:
        assert len(questions) == ctx.config.per_measure
    for q in questions:
        basic_checks(q)
        assert q.measure == measure and q.format is MEASURES_BY_ID[measure].format
    reference_check(MEASURES_BY_ID[measure].builder)(ctx, questions)


def test_too_few_values_skips_the_measure_with_a_reason() -> None:
    data = product_dataset()
    items = data.items.copy()
    items["categories"] = [["Home" if i % 2 else "Toys", "Mid", f"Leaf {i}"] for i in range(len(items))]
    two_roots = Dataset.from_frames("shop", "product", data.interactions, items)
    _ctx, built = build(two_roots, config(measures=("taxo_root", "taxo_leaf")))
    assert set(built) == {"taxo_leaf"}


def test_product_generic_measures_are_built(product: Built) -> None:
    _ctx, built = product
    assert {"assoc_rule", "mem_item_item", "mem_user_user", "neu_item2users", "neu_user2items"} <= set(built)
    assert not {"kg_movie_genre", "text_logline"} & set(built)


def test_music_measures_use_default_text_and_genres() -> None:
    music = music_dataset()
    ctx, built = build(music, config(measures=("lastfm_next_artist", "lastfm_artist_genre")))
    assert set(built) == {"lastfm_next_artist", "lastfm_artist_genre"}
    check_attribute("genres")(ctx, built["lastfm_artist_genre"])
    seqs = sequences(music)
    assert MEASURES_BY_ID["lastfm_next_artist"].factor.value == "lastfm next artist"
    for q in built["lastfm_next_artist"]:
        assert q.format.n_options == 20  # LLaRA: the next artist among 20 candidates
        assert all(h.text == field_of(music, "title")[h.id] for h in q.history)  # names only
        assert len(q.history) <= 10
        assert q.answer.id == seqs[q.target.id][q.evidence["position"]]
        assert all(c.id not in seqs[q.target.id] for i, c in enumerate(q.candidates) if i != q.answer_index)


def test_positions_cover_every_slot(movie: Built) -> None:
    _ctx, built = movie
    hit = [q.answer_index for m in ("assoc_rule", "mem_item_item", "mem_user_user") for q in built[m]]
    assert set(hit) == set(range(10))


def test_short_histories_never_give_questions() -> None:
    base = make_movie_dataset()
    extra = pd.DataFrame({"user_id": ["short"] * 3, "item_id": ["i1", "i2", "i3"], "timestamp": [1, 2, 3]})
    data = Dataset.from_frames("toy", "movie", pd.concat([base.interactions, extra]), base.items)
    _ctx, built = build(data, config(per_measure=200, measures=("kg_movie_genre", "mem_user_user")))
    for questions in built.values():
        assert all(q.target.id != "short" for q in questions)


def test_adding_a_measure_never_changes_another() -> None:
    data = make_movie_dataset()
    _c1, alone = build(data, config(measures=("kg_movie_genre",)))
    _c2, together = build(data, config(measures=("assoc_rule", "kg_movie_cast", "kg_movie_genre")))
    assert [q.to_json() for q in alone["kg_movie_genre"]] == [q.to_json() for q in together["kg_movie_genre"]]


def _field_values(dataset: Dataset, name: str) -> set[str]:
    values: set[str] = set()
    for value in dataset.items[name]:
        values.update([value] if isinstance(value, str) else [str(v) for v in value])
    return values


def check_declared_facts(dataset: Dataset, built: dict[str, list[Question]]) -> None:
    """What the catalogue says about options and the target is what the builder produced."""
    items = set(dataset.items["item_id"])
    users = set(dataset.interactions["user_id"])
    for measure_id, questions in built.items():
        measure = MEASURES_BY_ID[measure_id]
        for q in questions:
            ids = {c.id for c in q.candidates}
            if measure.options is OptionKind.ITEM:
                assert ids <= items, measure_id
            elif measure.options is OptionKind.USER:
                assert ids <= users, measure_id
            else:
                assert q.evidence["field"] in measure.requires, measure_id
                assert ids <= _field_values(dataset, q.evidence["field"]), measure_id
            # A prompt shows either the target or the history (test_prompts checks the templates).
            assert bool(q.history) is not measure.shows_target, measure_id
            if not measure.shows_target:
                assert q.target.kind == "user", measure_id


def test_movie_measures_build_what_the_catalogue_declares(toy: Dataset, movie: Built) -> None:
    _ctx, built = movie
    assert set(built) == {m.id for m in MEASURES if Domain.MOVIE in m.domains}
    check_declared_facts(toy, built)


def test_product_measures_build_what_the_catalogue_declares(product: Built) -> None:
    _ctx, built = product
    check_declared_facts(product_dataset(), built)
    kinds = {MEASURES_BY_ID[m].options for m in built}
    assert kinds == set(OptionKind)


# --- helpers -------------------------------------------------------------------------------------------


def test_draw_distinct_respects_exclusion_and_weights() -> None:
    gen = rng(1, "t")
    pool = np.arange(20)
    weights = np.ones(20)
    weights[5] = 0.0
    for _ in range(200):
        got = draw_distinct(gen, pool, 9, {0, 1, 2}, weights)
        assert got is not None
        assert len(set(got.tolist())) == 9
        assert not {0, 1, 2, 5} & set(got.tolist())
    assert draw_distinct(gen, pool, 17, {0, 1, 2}, weights) is None
    exact = draw_distinct(gen, pool, 16, {0, 1, 2}, weights)
    assert exact is not None and set(exact.tolist()) == set(range(3, 20)) - {5}


def test_windows_and_restriction_match_loops(movie: Built) -> None:
    ctx, _ = movie
    seq = ctx.sequences
    keep = np.arange(ctx.n_items) % 3 != 0
    sub = seq.restricted(keep)
    for u in range(ctx.n_users):
        assert sub.of(u).tolist() == [i for i in seq.of(u).tolist() if keep[i]]
    windows = set(sub.windows(4, keep).tolist())
    expected = {int(sub.ptr[u]) + t for u in range(ctx.n_users) for t in range(4, len(sub.of(u)))}
    assert windows == expected
