"""Option-only shortcuts that learn from the other questions: answer priors and a cross-fitted model.

Invariant: every score here is computed for a question without that
question's own answer. The answer-frequency prior counts how often each
option was the answer in the *other* questions of the measure (leave one
out); the option-only model (the hypothesis-only baseline of NLI benchmarks)
is a conditional logit trained on one half of the questions that scores the
other half, then the halves swap (2-fold cross-fitting), from features of the options alone:
popularity, answer count and rate on the training half, text length, id and
position. Nothing reads the target, the history or the evidence, so a score
above chance is what the options give away by themselves.

Each function returns, per question, the option scores a shortcut picks the
argmax of (:func:`recworld.lrworld.shortcuts.hit` turns them into credit).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recworld.lrworld.schema import Question

__all__ = ["answer_prior", "answer_rate", "option_model"]


def _answers_and_shows(questions: Sequence[Question]) -> tuple[Counter[str], Counter[str]]:
    right: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    for q in questions:
        right[q.candidates[q.answer_index].id] += 1
        for c in q.candidates:
            shown[c.id] += 1
    return right, shown


def answer_prior(questions: Sequence[Question]) -> list[list[float]]:
    """Per question and option: how many *other* questions of the measure have that option as answer."""
    right, _ = _answers_and_shows(questions)
    out: list[list[float]] = []
    for q in questions:
        own = q.candidates[q.answer_index].id
        out.append([float(right[c.id] - (c.id == own)) for c in q.candidates])
    return out


def answer_rate(questions: Sequence[Question]) -> list[list[float]]:
    """Per question and option: the share of the *other* questions showing it where it is the answer.

    An option shown nowhere else scores 0 (no evidence). This is the
    "always right when shown" shortcut (Star Wars was the answer 219 of the
    220 times an ML-100K assoc_rule question showed it).
    """
    right, shown = _answers_and_shows(questions)
    out: list[list[float]] = []
    for q in questions:
        own = q.candidates[q.answer_index].id
        row = []
        for c in q.candidates:
            r, s = right[c.id] - (c.id == own), shown[c.id] - 1
            row.append(r / s if s > 0 else 0.0)
        out.append(row)
    return out


def _numeric_id(value: str) -> float:
    try:
        return float(np.log1p(abs(float(value))))
    except ValueError:
        return -1.0


@dataclass(frozen=True)
class _Options:
    """A measure's options as (questions x options) arrays: what the model may read, nothing else."""

    codes: np.ndarray  # option id -> a code shared by every question showing it
    fixed: np.ndarray  # (questions, options, 4): log popularity, log length, log words, log numeric id
    answers: np.ndarray  # (questions,)

    @staticmethod
    def of(questions: Sequence[Question], popularity: Sequence[list[float] | None]) -> _Options:
        ids = [[c.id for c in q.candidates] for q in questions]
        _, codes = np.unique(np.asarray(ids, dtype=object).astype(str), return_inverse=True)
        rows = []
        for q, scores in zip(questions, popularity, strict=True):
            pop = scores or [0.0] * len(q.candidates)
            rows.append(
                [
                    (float(p), len(c.text), len(c.text.split()), _numeric_id(c.id))
                    for p, c in zip(pop, q.candidates, strict=True)
                ]
            )
        fixed = np.asarray(rows, dtype=np.float64)
        fixed[..., :3] = np.log1p(fixed[..., :3])
        answers = np.array([q.answer_index for q in questions], dtype=np.int64)
        return _Options(codes.reshape(len(questions), -1), fixed, answers)

    def features(self, rows: np.ndarray, train: np.ndarray) -> np.ndarray:
        """(len(rows), options, features) for ``rows``, with answer counts and rates from ``train`` only.

        Per option: the fixed features, answer count, answer rate and times shown on
        the training questions, whether it is the question's highest and lowest
        on each, and its slot. (Within-question centring adds nothing: the
        softmax over a question's options ignores shifts.)
        """
        size = int(self.codes.max()) + 1
        right = np.bincount(self.codes[train, self.answers[train]], minlength=size).astype(np.float64)
        shown = np.bincount(self.codes[train].ravel(), minlength=size).astype(np.float64)
        codes = self.codes[rows]
        rate = np.divide(right[codes], shown[codes], out=np.zeros(codes.shape), where=shown[codes] > 0)
        base = np.concatenate(
            [self.fixed[rows], np.stack([np.log1p(right[codes]), rate, np.log1p(shown[codes])], axis=-1)],
            axis=-1,
        )
        top = (base >= base.max(axis=1, keepdims=True)).astype(np.float64)
        bottom = (base <= base.min(axis=1, keepdims=True)).astype(np.float64)
        slots = np.broadcast_to(np.eye(codes.shape[1]), (len(rows), codes.shape[1], codes.shape[1]))
        return np.concatenate([base, top, bottom, slots], axis=-1)


def _fit_conditional_logit(x: np.ndarray, answers: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """Weights of a conditional logit: softmax over each question's options of ``x @ w``, L2-penalised.

    ``x`` is (questions, options, features), already standardised. The loss is
    convex; damped Newton steps from zero (exact Hessian, a few dozen
    features) converge in a handful of iterations and are deterministic.
    """
    n, _, d = x.shape
    rows = np.arange(n)
    chosen = x[rows, answers].sum(axis=0)

    def loss(w: np.ndarray) -> float:
        scores = x @ w
        top = scores.max(axis=1, keepdims=True)
        log_z = np.log(np.exp(scores - top).sum(axis=1)) + top[:, 0]
        return float((log_z - scores[rows, answers]).sum()) + 0.5 * l2 * float(w @ w)

    w = np.zeros(d)
    current = loss(w)
    for _ in range(50):
        scores = x @ w
        p = np.exp(scores - scores.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        mean = (p[..., None] * x).sum(axis=1)
        grad = mean.sum(axis=0) - chosen + l2 * w
        weighted = (np.sqrt(p)[..., None] * x).reshape(-1, d)
        hess = weighted.T @ weighted - mean.T @ mean + l2 * np.eye(d)
        step = np.linalg.solve(hess, grad)
        size = 1.0
        while size > 1e-4 and loss(w - size * step) > current:
            size /= 2
        w, previous = w - size * step, current
        current = loss(w)
        if previous - current < 1e-10 * max(1.0, abs(current)):
            break
    return w


def option_model(
    questions: Sequence[Question], popularity: Sequence[list[float] | None], seed: np.random.Generator
) -> list[list[float]] | None:
    """Held-out option scores of a conditional logit over option-only features (2-fold cross-fitting).

    A logistic model of "which option is the answer" with one softmax per
    question over its options (the form an argmax pick needs). ``popularity``
    holds each question's option popularities (None: not defined). None when there
    are too few questions to fit on one half and score the other (fewer than 20).
    """
    n = len(questions)
    if n < 20:
        return None
    order = seed.permutation(n)
    folds = [np.sort(order[: n // 2]), np.sort(order[n // 2 :])]
    options = _Options.of(questions, popularity)
    out: list[list[float]] = [[] for _ in range(n)]
    for k in (0, 1):
        train, test = folds[k], folds[1 - k]
        x = options.features(train, train)
        mean, std = x.mean(axis=(0, 1)), x.std(axis=(0, 1))
        std[std == 0] = 1.0
        w = _fit_conditional_logit((x - mean) / std, options.answers[train])
        scores = ((options.features(test, train) - mean) / std) @ w
        for i, row in zip(test.tolist(), scores.tolist(), strict=True):
            out[i] = [round(float(v), 9) for v in row]
    return out
