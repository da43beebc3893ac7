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

from helpers.lrworld.reference import binary_matrix, dense_cosine, item_text, pair_rules
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
        top = max(consequents.values())
        assert consequents[answer] == pytest.approx(top)
        margin = ctx.config.rule_margin
        for i, c in enumerate(q.candidates):
            if i != q.answer_index:
                assert col[c.id] != a
                if margin is None:
                    assert col[c.id] not in consequents
                else:  # a weaker consequent may be wrong; a near tie never is
                    assert consequents.get(col[c.id], -np.inf) < top - margin


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
            a = index[q.answer.id]
            assert sims[t, a] >= top - EPS
            runner_up = max([s for s in sims[t] if s < top - EPS], default=0.0)
            assert top - runner_up >= ctx.config.memory_margin
            assert vectors[t] @ vectors[a] >= ctx.config.memory_min_support, "the answer's support"
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


def timed_sequences(dataset: Dataset) -> dict[str, list[tuple[int, str]]]:
    """Per user, (timestamp, item id) sorted by time then id as strings: a loop, not the builders' arrays."""
    out: dict[str, list[tuple[int, str]]] = {}
    for u, it, t in zip(
        dataset.interactions["user_id"].astype(str),
        dataset.interactions["item_id"].astype(str),
        dataset.interactions["timestamp"].astype(int),
        strict=True,
    ):
        out.setdefault(u, []).append((int(t), it))
    return {u: sorted(rows) for u, rows in out.items()}


def window_of(rows: list[tuple[int, str]], pos: int, length: int) -> tuple[list[str], list[str]]:
    """(shown history, next event) at ``pos``: the event is every item at ``rows[pos]``'s time; the
    history is the last ``length`` items before it, less the earliest timestamp when that one was cut."""
    t = rows[pos][0]
    assert pos == 0 or rows[pos - 1][0] != t, "a question starts at the first item of its timestamp"
    event = [it for when, it in rows if when == t]
    window = rows[max(0, pos - length) : pos]
    cut = pos - length > 0 and window and rows[pos - length - 1][0] == window[0][0]
    if cut:
        window = [(when, it) for when, it in window if when != window[0][0]]
    return [it for _, it in window], event


def check_attribute(field: str, level: Level = "all", lead: int | None = None) -> Check:
    def check(ctx: BuildContext, qs: list[Question]) -> None:
        seqs = timed_sequences(ctx.dataset)
        values = field_of(ctx.dataset, field)

        def as_list(v: object) -> list[str]:
            if v is None or (isinstance(v, float) and np.isnan(v)):
                return []
            return [v] if isinstance(v, str) else list(v)  # type: ignore[call-overload]

        def eligible(path: list[str]) -> list[str]:
            depth = ctx.config.taxo_level
            interm = path[depth : depth + 1] if len(path) > depth + 1 else []
            part = {"root": path[:1], "leaf": path[-1:] if len(path) > 1 else [], "interm": interm}
            return part.get(level, path[:lead] if lead else path)

        vocabulary = {v for value in values.values() for v in eligible(as_list(value))}
        fold = lambda text: " ".join(text.casefold().split())  # noqa: E731
        for q in qs:
            pos = q.evidence["position"]
            shown, event = window_of(seqs[q.target.id], pos, ctx.history_length)
            assert pos >= ctx.config.min_history
            assert [h.id for h in q.history] == shown
            assert not set(event) & set(shown), "no item of the next event is on screen"
            assert q.evidence["next_item"] in event
            owned = {fold(v) for it in event for v in as_list(values.get(it))}
            right = {v for it in event for v in eligible(as_list(values.get(it)))}
            assert q.answer.id in right
            for i, c in enumerate(q.candidates):
                if i != q.answer_index:
                    assert fold(c.id) not in owned and c.id in vocabulary, "no tied item's value is wrong"

    return check


def check_next_item(view: str | None) -> Check:
    def check(ctx: BuildContext, qs: list[Question]) -> None:
        domain = ctx.dataset.domain.value
        rows = ctx.dataset.items.to_dict("records")
        texts = {str(r["item_id"]): item_text(r, domain, view) for r in rows}
        seqs = timed_sequences(ctx.dataset)
        for q in qs:
            seq = [(t, i) for t, i in seqs[q.target.id] if texts.get(i)]
            pos = q.evidence["position"]
            assert pos >= ctx.config.min_history
            shown, event = window_of(seq, pos, ctx.history_length)
            assert q.answer.id in event
            assert [h.id for h in q.history] == shown
            assert not set(event) & set(shown), "the answer is never on screen"
            assert all(h.text == texts[h.id] for h in q.history)
            owned = {i for _, i in seqs[q.target.id]}
            for i, c in enumerate(q.candidates):
                assert c.text == texts[c.id]
                if i != q.answer_index:
                    assert c.id not in owned

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
