"""``oracle``: recompute each question's ground truth from the suite's own files and answer with it.

It is a check, not a model: anything below ~1.0 on a measure is a ground-truth
bug (a builder and its definition disagree), so the report can show it next to
RANDOM. It is handed what every model is (the question's public view: no
answer, no evidence), and each measure family is recomputed from its
definition over the suite's dataset and the build config in its manifest:

* association rules: support, confidence and lift of target -> option over
  the suite's interactions; an option that is no rule under the build's
  thresholds scores nothing, the others by the build's ranking metric;
* memory: cosine of binary interaction vectors (the target to each option);
* neural: cosine in the NeuMF space the build saved (``SUITE/neumf``);
* next-item questions (attributes and next items): the shown history is found
  in the user's time-ordered sequence (restricted to items with the shown
  field, as the builder does), the item right after it is the next item, then
  that item's attribute values (compared case- and space-folded) or its id
  (:mod:`recworld.baselines.next_event`).

It also checks that some option *is* the ground truth over the whole
catalogue, not merely the best of the ten shown: the strongest rule of the
antecedent (under the build's metric), the top cosine neighbour among all
entities (neural: among the target's unseen keys), and, for next-item
questions, a shown history that is exactly the user's items before a window
the builder asks (its history and tie rules, ``BuildContext.windows``). When no
option qualifies (a planted wrong label, a weaker neighbour shown as the
positive, a suite whose manifest names the wrong ranking), the oracle answers
"none of the options": a miss, scored wrong, so its score falls below 1.0.

Which family a question belongs to, and its parameters, come from its
catalogue entry (:data:`~recworld.lrworld.measure.BuilderSpec`); the match in
:meth:`OracleBaseline._judge` is exhaustive, so a new builder family without a
recomputation here fails the type check (and ``tests/lrworld/test_catalogue.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import assert_never

import numpy as np

from recworld.baselines.classic import Baseline, cosine_rows, dense_row, rank_options
from recworld.baselines.next_event import NextEvents
from recworld.baselines.training import training_data
from recworld.chat import AnswerMode, Request, Response, Usage
from recworld.data.dataset import Dataset
from recworld.errors import ConfigError, ModelError
from recworld.lrworld.catalogue import get_measure
from recworld.lrworld.context import TIE_TOLERANCE
from recworld.lrworld.embeddings import SavedSpace, load_space
from recworld.lrworld.manifest import read_manifest
from recworld.lrworld.measure import AttributeSpec, MemorySpec, NeuralSpec, NextItemSpec, RuleSpec
from recworld.lrworld.schema import PublicQuestion
from recworld.models.registry import ModelConfig

_NONE = -np.inf
NO_OPTION = "none of the options"
_ONE_NEXT_ITEM = (
    "recworld.manifest/1",
    "recworld.manifest/2",
    "recworld.manifest/3",
)  # the oracle's reply when no option is the ground truth


class OracleBaseline(Baseline):
    """Answers every question with its recomputed ground truth."""

    name = "oracle"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        if config.suite_dir is None:
            raise ConfigError("the oracle baseline needs a suite directory (ModelConfig.suite_dir)")
        self._suite = Path(config.suite_dir)
        manifest = read_manifest(self._suite)
        self._build = manifest.config
        self._data = training_data(self._suite)
        # The builder's own view of the dataset, made on the first window question.
        # Suites up to manifest/3 ask the next item alone; later ones ask the next event (issue 24.3).
        sets = manifest.schema_id not in _ONE_NEXT_ITEM
        self._events = NextEvents(Dataset.load(self._suite / "dataset"), self._build, events_are_sets=sets)
        self._space: SavedSpace | None = None

    async def complete(self, request: Request) -> Response:
        """The recomputed answer, or :data:`NO_OPTION` (a miss) when no option is the ground truth."""
        question = request.question
        if isinstance(question, PublicQuestion) and not any(self._judge(question)[1]):
            return Response(text=NO_OPTION, choice_logprobs=None, usage=Usage(0, 0))
        return await super().complete(request)

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK})

    def rank(self, question: PublicQuestion) -> list[int]:
        scores, _ = self._judge(question)
        return rank_options([(float(s),) for s in scores], [c.id for c in question.candidates])

    def _judge(self, question: PublicQuestion) -> tuple[list[float], list[bool]]:
        """Each option's recomputed score, and whether it is the ground truth over the whole catalogue."""
        ids = [c.id for c in question.candidates]
        target = question.target.id
        spec = get_measure(question.measure).builder
        match spec:
            case RuleSpec():
                scores, best = self._rule_scores(target, ids), self._best_rule(target)
            case MemorySpec(kind=kind):
                scores, best = self._memory_scores(kind, target, ids), self._best_memory(kind, target)
            case NeuralSpec(kind=kind):
                scores, best = self._neural_scores(kind, target, ids), self._best_neural(kind, target)
            case AttributeSpec(field=field):
                scores = self._events.scores(question, view=None, field=field)
                return scores, [s > 0 for s in scores]
            case NextItemSpec(view=view):
                scores = self._events.scores(question, view=view, field=None)
                return scores, [s > 0 for s in scores]
            case _:
                assert_never(spec)
        if best is None or not np.isfinite(best):
            return scores, [False] * len(scores)
        return scores, [bool(np.isfinite(s) and s >= best - TIE_TOLERANCE) for s in scores]

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

    def _best_rule(self, target: str) -> float | None:
        """The build's metric of the antecedent's strongest rule over every item (None: no rule)."""
        data, cfg = self._data, self._build
        n_users = data.matrix.shape[0]
        t = data.item_index.get(target)
        if t is None or data.item_sq[t] / n_users < cfg.min_support:
            return None
        support = np.asarray(data.by_item @ dense_row(data.by_item, t)).ravel() / n_users
        supp_c = data.item_sq / n_users
        confidence = support / (data.item_sq[t] / n_users)
        ok = (support >= cfg.min_support) & (supp_c >= cfg.min_support) & (confidence >= cfg.min_confidence)
        ok[t] = False
        if not ok.any():
            return None
        metric = confidence / np.where(supp_c > 0, supp_c, 1.0) if cfg.rules == "lift" else confidence
        return float(metric[ok].max())

    def _best_memory(self, kind: str, target: str) -> float | None:
        """The top cosine of the target to every other entity of its kind."""
        data = self._data
        vectors, sq, index = (
            (data.by_item, data.item_sq, data.item_index)
            if kind == "item"
            else (data.matrix, data.user_sq, data.user_index)
        )
        t = index.get(target)
        if t is None:
            return None
        sims = cosine_rows(vectors, sq, np.arange(vectors.shape[0]), dense_row(vectors, t))
        sims[t] = _NONE
        return float(sims.max()) if len(sims) > 1 else None

    def _best_neural(self, kind: str, target: str) -> float | None:
        """The top cosine in the saved space among the keys the target never interacted with."""
        space = self._neural_space()
        data = self._data
        # The saved rows follow the interaction matrix's ids, as the training data's do.
        if kind == "item":
            queries, keys, row = space.item, space.user, data.item_index.get(target)
            seen = None if row is None else data.by_item[row].indices
        else:
            queries, keys, row = space.user, space.item, data.user_index.get(target)
            seen = None if row is None else data.matrix[row].indices
        if row is None or seen is None or row >= len(queries):
            return None
        query = _unit(queries[row])
        keys64 = keys.astype(np.float64)
        norms = np.linalg.norm(keys64, axis=1)
        sims = (keys64 @ query) / np.where(norms > 0, norms, 1.0)
        sims[seen] = _NONE
        return float(sims.max()) if np.isfinite(sims).any() else None

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

    def _neural_space(self) -> SavedSpace:
        if self._space is None:
            space = load_space(self._suite)
            data = self._data
            for ids, index in ((space.user_ids, data.user_index), (space.item_ids, data.item_index)):
                if [index.get(str(i)) for i in ids] != list(range(len(ids))):
                    raise ModelError(f"{self._suite}: the saved NeuMF rows do not follow the dataset's ids")
            self._space = space
        return self._space

    def _neural_scores(self, kind: str, target: str, ids: Sequence[str]) -> list[float]:
        space = self._neural_space()
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


def _unit(vector: np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v
