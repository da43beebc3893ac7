"""Every measure's questions checked against ground truth re-derived by brute force."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import assert_never

import numpy as np
import pandas as pd
import pytest

from recworld.data.dataset import Dataset, Domain
from recworld.lrworld.builders.base import draw_distinct
from recworld.lrworld.catalogue import MEASURES, MEASURES_BY_ID, OptionKind
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.context import BuildContext
from recworld.lrworld.measure import (
    AttributeSpec,
    BuilderSpec,
    Level,
    MemorySpec,
    NeuralSpec,
    NextItemSpec,
    RuleSpec,
)
from recworld.lrworld.schema import EntityKind, Question
from recworld.lrworld.suite import build_questions, plan_measures
from recworld.mining import NeuMFConfig
from recworld.seeding import rng

from ._reference import binary_matrix, dense_cosine, item_text, pair_rules
from .catalogue_data import dataset_for, music_dataset, product_dataset
from .conftest import make_movie_dataset

FAST_NEUMF = NeuMFConfig(factors=8, mlp_layers=(16, 8), epochs=1, eval_users=0, max_train_samples=5000)
EPS = 5e-7


def config(**kw: object) -> BuildConfig:
    base: dict[str, object] = {"per_measure": 25, "neumf": FAST_NEUMF}
    base.update(kw)
    return BuildConfig.model_validate(base)


Built = tuple[BuildContext, dict[str, list[Question]]]


def build(dataset: Dataset, cfg: BuildConfig) -> Built:
    ctx = BuildContext(dataset, cfg)
    planned, skipped = plan_measures(dataset, cfg)
    built = build_questions(ctx, planned, skipped)
    return ctx, built


def sequences(dataset: Dataset) -> dict[str, list[str]]:
    return dataset.interactions.groupby("user_id", sort=False)["item_id"].agg(list).to_dict()


def field_of(dataset: Dataset, name: str) -> dict[str, object]:
    return dict(zip(dataset.items["item_id"], dataset.items[name], strict=True))


def basic_checks(q: Question) -> None:
    Question.model_validate(q.to_json())
    ids = [c.id for c in q.candidates]
    assert len(set(ids)) == len(ids) == q.format.n_options
    folded = [" ".join(c.text.casefold().split()) for c in q.candidates]
    assert len(set(folded)) == len(folded), "two options read the same"


# --- per-measure brute-force checks -----------------------------------------------------------------


def check_assoc(ctx: BuildContext, qs: list[Question]) -> None:
    dense, _users, items = binary_matrix(ctx.dataset.interactions)
    col = {it: j for j, it in enumerate(items)}
    share = dense.mean(axis=0)  # each item's support
    rules = {
        k: v
        for k, v in pair_rules(dense).items()
        if v[0] >= ctx.config.min_support - 1e-12 and v[1] >= ctx.config.min_confidence - 1e-12
    }
    lift = ctx.config.rules == "lift"
    for q in qs:
        a = col[q.target.id]
        consequents = {
            c: conf / share[c] if lift else conf for (aa, c), (_s, conf) in rules.items() if aa == a
        }
        answer = col[q.answer.id]
        assert answer in consequents
        assert consequents[answer] == pytest.approx(max(consequents.values()))
        for i, c in enumerate(q.candidates):
            if i != q.answer_index:
                assert col[c.id] not in consequents and col[c.id] != a


Check = Callable[[BuildContext, list[Question]], None]


def check_memory(kind: EntityKind) -> Check:
    def check(ctx: BuildContext, qs: list[Question]) -> None:
        dense, users, items = binary_matrix(ctx.dataset.interactions)
        vectors, names = (dense.T, items) if kind == "item" else (dense, users)
        sims = dense_cosine(vectors, vectors)
        np.fill_diagonal(sims, -np.inf)
        index = {n: i for i, n in enumerate(names)}
        for q in qs:
            t = index[q.target.id]
            top = sims[t].max()
            assert top >= ctx.config.min_similarity
            assert sims[t, index[q.answer.id]] >= top - EPS
            for i, c in enumerate(q.candidates):
                if i != q.answer_index:
                    assert sims[t, index[c.id]] < top - EPS
            if kind == "user":
                assert dense[t].sum() >= ctx.config.min_history

    return check


def check_neural(kind: EntityKind) -> Check:
    def check(ctx: BuildContext, qs: list[Question]) -> None:
        dense, users, items = binary_matrix(ctx.dataset.interactions)
        emb = ctx.neumf
        queries, keys = (emb.item, emb.user) if kind == "item" else (emb.user, emb.item)
        q_names, k_names = (items, users) if kind == "item" else (users, items)
        seen = dense.T if kind == "item" else dense
        sims = dense_cosine(queries.astype(np.float64), keys.astype(np.float64))
        q_index = {n: i for i, n in enumerate(q_names)}
        k_index = {n: i for i, n in enumerate(k_names)}
        for q in qs:
            t = q_index[q.target.id]
            unseen = seen[t] == 0
            top = sims[t][unseen].max()
            assert sims[t, k_index[q.answer.id]] >= top - 1e-5
            for i, c in enumerate(q.candidates):
                j = k_index[c.id]
                assert unseen[j], "a key seen in training is never a candidate"
                if i != q.answer_index:
                    assert sims[t, j] < top - 1e-7

    return check


def check_attribute(field: str, level: Level = "all", lead: int | None = None) -> Check:
    def check(ctx: BuildContext, qs: list[Question]) -> None:
        seqs = sequences(ctx.dataset)
        values = field_of(ctx.dataset, field)

        def as_list(v: object) -> list[str]:
            return [v] if isinstance(v, str) else list(v)  # type: ignore[call-overload]

        vocabulary = set()
        for v in values.values():
            if v is None or (isinstance(v, float) and np.isnan(v)):
                continue
            path = as_list(v)
            depth = ctx.config.taxo_level
            interm = path[depth : depth + 1] if len(path) > depth + 1 else []
            part = {"root": path[:1], "leaf": path[-1:] if len(path) > 1 else [], "interm": interm}
            vocabulary |= set(part.get(level, path[:lead] if lead else path))
        for q in qs:
            seq = seqs[q.target.id]
            pos = q.evidence["position"]
            nxt = seq[pos]
            assert nxt == q.evidence["next_item"]
            assert pos >= ctx.config.min_history
            assert [h.id for h in q.history] == seq[max(0, pos - ctx.history_length) : pos]
            assert nxt not in {h.id for h in q.history}, "the answer is never on screen"
            path = as_list(values[nxt])
            depth = ctx.config.taxo_level
            allowed = {"root": path[:1], "leaf": path[-1:], "interm": path[depth : depth + 1]}.get(
                level, path[:lead] if lead else path
            )
            assert q.answer.id in allowed
            for i, c in enumerate(q.candidates):
                if i != q.answer_index:
                    assert c.id not in path and c.id in vocabulary

    return check


def check_next_item(view: str | None) -> Check:
    def check(ctx: BuildContext, qs: list[Question]) -> None:
        domain = ctx.dataset.domain.value
        rows = ctx.dataset.items.to_dict("records")
        texts = {str(r["item_id"]): item_text(r, domain, view) for r in rows}
        seqs = sequences(ctx.dataset)
        for q in qs:
            seq = [i for i in seqs[q.target.id] if texts.get(i)]
            pos = q.evidence["position"]
            assert pos >= ctx.config.min_history
            assert q.answer.id == seq[pos]
            assert [h.id for h in q.history] == seq[max(0, pos - ctx.history_length) : pos]
            assert q.answer.id not in {h.id for h in q.history}, "the answer is never on screen"
            assert all(h.text == texts[h.id] for h in q.history)
            for i, c in enumerate(q.candidates):
                assert c.text == texts[c.id]
                if i != q.answer_index:
                    assert c.id not in seqs[q.target.id]

    return check


def reference_check(spec: BuilderSpec) -> Check:
    """The brute-force check of a builder family, with the catalogue entry's parameters."""
    match spec:
        case RuleSpec():
            return check_assoc
        case MemorySpec(kind=kind):
            return check_memory(kind)
        case NeuralSpec(kind=kind):
            return check_neural(kind)
        case AttributeSpec(field=field, level=level, lead=lead):
            return check_attribute(field, level, lead)
        case NextItemSpec(view=view):
            return check_next_item(view)
        case _:
            assert_never(spec)


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
    assert questions, f"the {domain} test data builds no {measure} question (tests/lrworld/catalogue_data.py)"
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
