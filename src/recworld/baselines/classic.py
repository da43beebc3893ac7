"""Classic recommender baselines: ``random``, ``popularity`` and ``itemknn``.

They answer LRWorld questions from the public view of the question
(:class:`~recworld.lrworld.schema.PublicQuestion`, ``Request.question``: ids
and texts, no answer, no evidence) and the interactions the suite was built
from (``ModelConfig.suite_dir / "dataset"``), never from the prompt: the
structure they need comes from the dataset, as any recommender would get it. They give the
LLMs a floor to compare against and check the ground truth: ``itemknn`` on
``mem_item_item`` uses the same cosine the builder does, so it must score about 1.0.

How options are read comes from the measure's catalogue entry
(:class:`~recworld.lrworld.catalogue.Measure`), never from a list of ids here:

* ``options`` is ``ATTRIBUTE``: values of the item field its builder family names
  (:class:`~recworld.lrworld.measure.AttributeSpec`).
* ``options`` is ``USER``: user ids; ``ITEM``: item ids.
* ``shows_target`` with an item target: item options are ranked by similarity
  to that item; otherwise by similarity to the history the question shows (or,
  when it shows none, to the target user's own training items).

Each baseline ranks the options; the answer is the top one and, in loglik mode,
``choice_logprobs`` is a log-softmax over negative ranks (a score order, not a
probability). Ties are broken by a secondary signal (global popularity) and
then by option id, so answers are deterministic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.special import log_softmax

from recworld.baselines.training import training_data
from recworld.chat import AnswerMode, Request, Response, Usage
from recworld.errors import ConfigError, ModelError
from recworld.lrworld.catalogue import Measure, OptionKind, get_measure
from recworld.lrworld.measure import AttributeSpec
from recworld.lrworld.schema import PublicQuestion
from recworld.mining import cosine_topk
from recworld.models.options import ItemKNNOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec
from recworld.seeding import rng

# Neighbours per history item whose attribute values vote in itemknn.
DEFAULT_VOTE_NEIGHBOURS = 50


def option_field(question: PublicQuestion) -> str:
    """The item field whose values an attribute question offers: its measure's builder family names it."""
    spec = get_measure(question.measure).builder
    if not isinstance(spec, AttributeSpec):
        raise ModelError(f"question {question.id}: measure {question.measure} offers no attribute values")
    return spec.field


# -- scoring helpers ---------------------------------------------------------------------------------


def cosine_rows(vectors: sp.csr_matrix, sq: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of each of ``rows`` to a (dense) query vector; 0 where either is empty.

    Computed as dot / sqrt(sq_i * sq_q) in float64, the formula the ground truth uses,
    so equal similarities of binary vectors compare equal.
    """
    dots = np.asarray(vectors[rows] @ query).ravel()
    q_sq = float(query @ query)
    denom = np.sqrt(sq[rows] * q_sq)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, dots / np.where(denom > 0, denom, 1.0), 0.0)


def dense_row(vectors: sp.csr_matrix, row: int) -> np.ndarray:
    return np.asarray(vectors[row].toarray()).ravel()


def rank_options(keys: Sequence[tuple[float, ...]], ids: Sequence[str]) -> list[int]:
    """Option indices best first: larger keys win, then the smaller id."""
    return sorted(range(len(ids)), key=lambda i: (*(-k for k in keys[i]), ids[i]))


# -- the baselines --------------------------------------------------------------------------------


class Baseline:
    """Shared plumbing: read the question, rank its options, answer with a label."""

    name = "baseline"

    def __init__(self, config: ModelConfig) -> None:
        self._config = config

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": self.name, "model": self.name}

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK})

    async def complete(self, request: Request) -> Response:
        if request.mode not in self.supports:
            raise ModelError(f"the {self.name} baseline does not answer in {request.mode.value} mode")
        question = request.question
        if not isinstance(question, PublicQuestion):
            raise ModelError(f"the {self.name} baseline answers LRWorld questions only (Request.question)")
        labels = request.choices or tuple(chr(ord("A") + i) for i in range(len(question.candidates)))
        if len(labels) != len(question.candidates):
            raise ModelError(
                f"question {question.id}: {len(labels)} labels for {len(question.candidates)} candidates"
            )
        order = self.rank(question)
        ranks = np.empty(len(order), dtype=np.float64)
        ranks[order] = np.arange(len(order), dtype=np.float64)
        logprobs = tuple(float(x) for x in log_softmax(-ranks))
        text = labels[order[0]]
        if request.mode is AnswerMode.LOGLIK:
            return Response(text=text, choice_logprobs=logprobs, usage=Usage(0, 0))
        return Response(text=text, usage=Usage(0, 0))

    def rank(self, question: PublicQuestion) -> list[int]:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


class RandomBaseline(Baseline):
    """A uniformly random option, seeded per question: the chance floor."""

    name = "random"

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": self.name, "model": self.name, "seed": str(self._config.seed)}

    def rank(self, question: PublicQuestion) -> list[int]:
        generator = rng(self._config.seed, "random", question.id)
        return [int(i) for i in generator.permutation(len(question.candidates))]


class DataBaseline(Baseline):
    """A baseline that reads the suite's training interactions."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        if config.suite_dir is None:
            raise ConfigError(f"the {self.name} baseline needs a suite directory (ModelConfig.suite_dir)")
        if not (Path(config.suite_dir) / "dataset").is_dir():
            raise ConfigError(
                f"{config.suite_dir}: no dataset/ folder; the {self.name} baseline trains on it"
            )
        self._data = training_data(Path(config.suite_dir))

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": self.name, "model": self.name, "dataset": self._data.fingerprint}

    def rank(self, question: PublicQuestion) -> list[int]:
        ids = [c.id for c in question.candidates]
        measure = get_measure(question.measure)
        if measure.options is OptionKind.ATTRIBUTE:
            keys = self.attribute_keys(question, option_field(question), ids)
        elif measure.options is OptionKind.USER:
            keys = self.user_keys(question, ids)
        else:
            keys = self.item_keys(question, measure, ids)
        return rank_options(keys, ids)

    def history_cols(self, question: PublicQuestion) -> np.ndarray:
        """The question's history items, or the target user's training items when it shows none."""
        if question.history:
            return self._data.item_cols([e.id for e in question.history])
        if question.target.kind == "user":
            return self._data.user_history(question.target.id)
        return np.zeros(0, dtype=np.int64)

    def _popularity(self, index: Mapping[str, int], counts: np.ndarray, ids: Sequence[str]) -> list[float]:
        return [float(counts[index[i]]) if i in index else 0.0 for i in ids]

    def item_popularity(self, ids: Sequence[str]) -> list[float]:
        return self._popularity(self._data.item_index, self._data.item_sq, ids)

    def user_activity(self, ids: Sequence[str]) -> list[float]:
        return self._popularity(self._data.user_index, self._data.user_sq, ids)

    def attribute_popularity(
        self, question: PublicQuestion, name: str, ids: Sequence[str]
    ) -> tuple[list[float], list[float]]:
        """Per option: how often the history's items carry it, and how many catalogue items do."""
        values = self._data.values(name)
        local: Counter[str] = Counter(v for col in self.history_cols(question) for v in values[int(col)])
        overall = self._data.global_counts(name)
        return [float(local[i]) for i in ids], [float(overall[i]) for i in ids]

    def item_keys(
        self, question: PublicQuestion, measure: Measure, ids: Sequence[str]
    ) -> list[tuple[float, ...]]:
        raise NotImplementedError

    def user_keys(self, question: PublicQuestion, ids: Sequence[str]) -> list[tuple[float, ...]]:
        raise NotImplementedError

    def attribute_keys(
        self, question: PublicQuestion, name: str, ids: Sequence[str]
    ) -> list[tuple[float, ...]]:
        raise NotImplementedError


class PopularityBaseline(DataBaseline):
    """The most interacted item, the most active user, the most common attribute value."""

    name = "popularity"

    def item_keys(
        self, question: PublicQuestion, measure: Measure, ids: Sequence[str]
    ) -> list[tuple[float, ...]]:
        return [(p,) for p in self.item_popularity(ids)]

    def user_keys(self, question: PublicQuestion, ids: Sequence[str]) -> list[tuple[float, ...]]:
        return [(a,) for a in self.user_activity(ids)]

    def attribute_keys(
        self, question: PublicQuestion, name: str, ids: Sequence[str]
    ) -> list[tuple[float, ...]]:
        local, overall = self.attribute_popularity(question, name, ids)
        return list(zip(local, overall, strict=True))


class ItemKNNBaseline(DataBaseline):
    """Item-item (and user-user) cosine on binary interaction vectors."""

    name = "itemknn"

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        self._k = parse_options(ItemKNNOptions, config.options, "itemknn").neighbours

    def _item_similarity(self, cols: np.ndarray, query: np.ndarray) -> np.ndarray:
        return cosine_rows(self._data.by_item, self._data.item_sq, cols, query)

    def item_keys(
        self, question: PublicQuestion, measure: Measure, ids: Sequence[str]
    ) -> list[tuple[float, ...]]:
        data = self._data
        known = [i for i in ids if i in data.item_index]
        cols = data.item_cols(known)
        sims = np.zeros(len(cols))
        target = data.item_index.get(question.target.id) if question.target.kind == "item" else None
        if measure.shows_target and target is not None:
            sims = self._item_similarity(cols, dense_row(data.by_item, target))
        else:
            for h in self.history_cols(question):
                sims = sims + self._item_similarity(cols, dense_row(data.by_item, int(h)))
        by_id = dict(zip(known, sims.tolist(), strict=True))
        popularity = self.item_popularity(ids)
        return [(by_id.get(i, 0.0), p) for i, p in zip(ids, popularity, strict=True)]

    def user_keys(self, question: PublicQuestion, ids: Sequence[str]) -> list[tuple[float, ...]]:
        data = self._data
        known = [i for i in ids if i in data.user_index]
        rows = np.array([data.user_index[i] for i in known], dtype=np.int64)
        if question.target.kind == "user" and question.target.id in data.user_index:
            query = dense_row(data.matrix, data.user_index[question.target.id])
            sims = cosine_rows(data.matrix, data.user_sq, rows, query)
        elif question.target.kind == "item" and question.target.id in data.item_index:
            # Summed cosine to every user of the item: cos(c, v) summed over v is
            # x_c . (sum_v x_v / |x_v|) / |x_c|, one sparse product.
            users = np.asarray(data.by_item[data.item_index[question.target.id]].indices)
            weights = 1.0 / np.sqrt(data.user_sq[users])
            query = np.asarray(data.matrix[users].T @ weights).ravel()
            dots = np.asarray(data.matrix[rows] @ query).ravel()
            with np.errstate(divide="ignore", invalid="ignore"):
                sims = np.where(data.user_sq[rows] > 0, dots / np.sqrt(data.user_sq[rows]), 0.0)
        else:
            sims = np.zeros(len(rows))
        by_id = dict(zip(known, sims.tolist(), strict=True))
        activity = self.user_activity(ids)
        return [(by_id.get(i, 0.0), a) for i, a in zip(ids, activity, strict=True)]

    def attribute_keys(
        self, question: PublicQuestion, name: str, ids: Sequence[str]
    ) -> list[tuple[float, ...]]:
        data = self._data
        values = data.values(name)
        history = self.history_cols(question)
        votes: dict[str, float] = {}
        if len(history):
            # The history items vote with weight 1, their k nearest neighbours with their cosine.
            nb = cosine_topk(data.by_item, self._k, rows=history)
            for h, row_idx, row_score in zip(history, nb.index, nb.score, strict=True):
                for v in values[int(h)]:
                    votes[v] = votes.get(v, 0.0) + 1.0
                for j, s in zip(row_idx, row_score, strict=True):
                    if j >= 0:
                        for v in values[int(j)]:
                            votes[v] = votes.get(v, 0.0) + float(s)
        local, overall = self.attribute_popularity(question, name, ids)
        return [(votes.get(i, 0.0), lo, g) for i, lo, g in zip(ids, local, overall, strict=True)]


_BASELINES: dict[str, type[Baseline]] = {
    "random": RandomBaseline,
    "popularity": PopularityBaseline,
    "itemknn": ItemKNNBaseline,
}


def create(spec: ModelSpec, config: ModelConfig) -> Baseline:
    """``random``, ``popularity`` or ``itemknn`` (they take no model name)."""
    if spec.name:
        raise ConfigError(f"the {spec.backend} baseline takes no name, got {str(spec)!r}")
    return _BASELINES[spec.backend](config)
