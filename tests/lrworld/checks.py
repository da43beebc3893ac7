"""The brute-force check of each builder family, and the small build helpers the LRWorld tests share.

A measure's check comes from its catalogue entry (:func:`reference_check` on
its ``builder``), so a measure of an existing family is checked without being
listed here; a new family without a branch fails mypy (``assert_never``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

import numpy as np
import pytest

from recworld.data.dataset import Dataset
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

from ._reference import binary_matrix, dense_cosine, item_text, pair_rules

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
