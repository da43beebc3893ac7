"""``oracle``: recompute each question's ground truth from the suite's own files and answer with it.

It is a check, not a model: anything below ~1.0 on a measure is a ground-truth
bug (a builder and its definition disagree), so the report can show it next to
RANDOM. Each measure family is recomputed from its definition, not read from
the question's ``evidence`` or answer:

* association rules: support, confidence and lift of target -> option over
  the suite's interactions; an option that is no rule under the build's
  thresholds scores nothing, the others by the build's ranking metric;
* memory: cosine of binary interaction vectors (the target to each option);
* neural: cosine in the NeuMF space the build saved (``SUITE/neumf``);
* next-item questions (attributes and next items): the user's item at the
  question's position in the time-ordered history (restricted to items with
  the shown field, as the builder does), then that item's attribute values
  (compared case- and space-folded) or its id.

Which family a question belongs to, and its parameters, come from its
catalogue entry (:data:`~recworld.lrworld.measure.BuilderSpec`); the match in
:meth:`OracleBaseline.rank` is exhaustive, so a new builder family without a
recomputation here fails the type check (and ``tests/lrworld/test_catalogue.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, assert_never

import numpy as np

from recworld.baselines.classic import Baseline, cosine_rows, dense_row, rank_options
from recworld.baselines.training import as_values, training_data
from recworld.data.dataset import Dataset
from recworld.errors import ConfigError
from recworld.lrworld.catalogue import get_measure
from recworld.lrworld.embeddings import SavedSpace, load_space
from recworld.lrworld.manifest import read_manifest
from recworld.lrworld.measure import AttributeSpec, MemorySpec, NeuralSpec, NextItemSpec, RuleSpec
from recworld.lrworld.options import fold
from recworld.lrworld.schema import Question
from recworld.models.registry import ModelConfig

_NONE = -np.inf


class OracleBaseline(Baseline):
    """Answers every question with its recomputed ground truth."""

    name = "oracle"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        if config.suite_dir is None:
            raise ConfigError("the oracle baseline needs a suite directory (ModelConfig.suite_dir)")
        self._suite = Path(config.suite_dir)
        self._build = read_manifest(self._suite).config
        self._data = training_data(self._suite)
        dataset = Dataset.load(self._suite / "dataset")
        inter = dataset.interactions
        # Row order is time order with ties in file order: the order the builder walked.
        self._sequences: dict[str, list[str]] = {
            str(u): [str(i) for i in items]
            for u, items in inter.groupby("user_id", sort=False)["item_id"].agg(list).items()
        }
        self._space: SavedSpace | None = None

    def rank(self, question: Question) -> list[int]:
        ids = [c.id for c in question.candidates]
        spec = get_measure(question.measure).builder
        match spec:
            case RuleSpec():
                scores = self._rule_scores(question.target.id, ids)
            case MemorySpec(kind=kind):
                scores = self._memory_scores(kind, question.target.id, ids)
            case NeuralSpec(kind=kind):
                scores = self._neural_scores(kind, question.target.id, ids)
            case AttributeSpec(field=field):
                scores = self._attribute_scores(field, question)
            case NextItemSpec(view=view):
                scores = self._next_item_scores(view, question)
            case _:
                assert_never(spec)
        return rank_options([(float(s),) for s in scores], ids)

    # -- association rules ---------------------------------------------------------------------

    def _rule_scores(self, target: str, ids: Sequence[str]) -> list[float]:
        """The build's ranking metric of the rule target -> option, or nothing when it is no rule.

        Written with the miner's own expressions (shares of users, then ratios) so the
        threshold comparisons agree with it to the last bit.
        """
        data, cfg = self._data, self._build
        n_users = data.matrix.shape[0]
        t = data.item_index.get(target)
        if t is None:
            return [_NONE] * len(ids)
        supp_t = data.item_sq[t] / n_users
        row = dense_row(data.by_item, t)
        scores: list[float] = []
        for option in ids:
            c = data.item_index.get(option)
            if c is None or c == t or supp_t < cfg.min_support:
                scores.append(_NONE)
                continue
            support = float((data.by_item[c] @ row)[0]) / n_users
            supp_c = data.item_sq[c] / n_users
            confidence = support / supp_t
            if support < cfg.min_support or supp_c < cfg.min_support or confidence < cfg.min_confidence:
                scores.append(_NONE)
                continue
            scores.append(confidence / supp_c if cfg.rules == "lift" else confidence)
        return scores

    # -- memory and neural ----------------------------------------------------------------------

    def _memory_scores(self, kind: str, target: str, ids: Sequence[str]) -> list[float]:
        data = self._data
        vectors, sq, index = (
            (data.by_item, data.item_sq, data.item_index)
            if kind == "item"
            else (data.matrix, data.user_sq, data.user_index)
        )
        if target not in index:
            return [_NONE] * len(ids)
        rows = np.array([index.get(i, -1) for i in ids], dtype=np.int64)
        sims = cosine_rows(vectors, sq, np.maximum(rows, 0), dense_row(vectors, index[target]))
        return [float(s) if r >= 0 else _NONE for s, r in zip(sims, rows, strict=True)]

    def _neural_scores(self, kind: str, target: str, ids: Sequence[str]) -> list[float]:
        if self._space is None:
            self._space = load_space(self._suite)
        space = self._space
        users = {str(u): i for i, u in enumerate(space.user_ids)}
        items = {str(u): i for i, u in enumerate(space.item_ids)}
        (queries, q_index), (keys, k_index) = (
            ((space.item, items), (space.user, users))
            if kind == "item"
            else ((space.user, users), (space.item, items))
        )
        if target not in q_index:
            return [_NONE] * len(ids)
        query = _unit(queries[q_index[target]])
        return [float(_unit(keys[k_index[i]]) @ query) if i in k_index else _NONE for i in ids]

    # -- next-item questions --------------------------------------------------------------------

    def _next_item(self, question: Question, view: str | None) -> str | None:
        """The item at the question's position in the user's history (restricted to items with ``view``)."""
        history = self._sequences.get(question.target.id, [])
        if view is not None:
            history = [i for i in history if _values(self._data.items, i, view)]
        position = int(question.evidence.get("position", -1))
        return history[position] if 0 <= position < len(history) else None

    def _next_item_scores(self, view: str | None, question: Question) -> list[float]:
        nxt = self._next_item(question, view)
        if nxt is None:
            return [_NONE] * len(question.candidates)
        return [1.0 if c.id == nxt else 0.0 for c in question.candidates]

    def _attribute_scores(self, field: str, question: Question) -> list[float]:
        nxt = self._next_item(question, None)
        if nxt is None:
            return [_NONE] * len(question.candidates)
        values = {fold(v) for v in _values(self._data.items, nxt, field)}
        return [1.0 if fold(c.text) in values else 0.0 for c in question.candidates]


def _values(items: Any, item_id: str, field: str) -> tuple[str, ...]:
    """Values of ``field`` on one item of the attribute frame (indexed by item_id)."""
    if field not in items.columns or item_id not in items.index:
        return ()
    return as_values(items.at[item_id, field])


def _unit(vector: np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v
