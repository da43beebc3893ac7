"""What the gold-free and planted-label tests share: small built suites, a cheater, a planted copy.

Written apart from the product: the datasets are generated here (users with
same-second ties, every field a movie or product measure reads), the request
walker knows nothing of RecWorld's types beyond Python's own (dataclasses,
pydantic models, mappings, sequences, ``__dict__``), and the planted copy is
plain JSON editing.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel

from recworld.chat import AnswerMode, Request, Response, Usage
from recworld.data.dataset import Dataset
from recworld.lrworld.config import BuildConfig
from recworld.lrworld.suite import build_suite
from recworld.mining import NeuMFConfig

FAST_NEUMF = NeuMFConfig(factors=8, mlp_layers=(16, 8), epochs=2, eval_users=0, max_train_samples=20000)
GENRES = ("Action", "Comedy", "Drama", "Horror", "Romance", "Sci-Fi", "Thriller", "Western")
ROOTS = ("Tools", "Kitchen", "Garden", "Office", "Toys")
COLOURS = ("Black", "Red", "Blue", "Green", "Yellow", "Silver")
BRANDS = ("Acme", "Bosch", "Makita", "Stanley", "Ryobi", "Zeta")


def _log(gen: np.random.Generator, n_users: int, n_items: int, tie_share: float) -> pd.DataFrame:
    """Users in taste blocks, each step one item or (``tie_share``) two items in the same second."""
    rows = []
    for u in range(n_users):
        block = np.arange((u % 4) * n_items // 4, (u % 4 + 1) * n_items // 4)
        own = gen.choice(block, size=int(gen.integers(10, 18)), replace=False).tolist()
        own += gen.choice(n_items, size=4, replace=False).tolist()
        t = 1_000_000 + 7 * u
        for k, item in enumerate(dict.fromkeys(own)):
            if k == 0 or gen.random() >= tie_share:
                t += int(gen.integers(1, 500))
            rows.append({"user_id": f"u{u}", "item_id": f"i{item}", "timestamp": t})
    return pd.DataFrame(rows).drop_duplicates(["user_id", "item_id"])


def movie_dataset(seed: int = 0, n_users: int = 90, n_items: int = 120, tie_share: float = 0.3) -> Dataset:
    gen = np.random.default_rng(seed)
    inter = _log(gen, n_users, n_items, tie_share)
    items = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(n_items)],
            "title": [f"Film {i}" for i in range(n_items)],
            "year": [1970 + i % 40 for i in range(n_items)],
            "genres": [sorted({GENRES[i % 8], GENRES[(i * 5 + 1) % 8]}) for i in range(n_items)],
            "cast": [[f"Actor {(i * 3 + k) % 30}" for k in range(4)] for i in range(n_items)],
            "director": [[f"Director {i % 15}"] for i in range(n_items)],
            "logline": [f"Tale {i}: someone {GENRES[i % 8].lower()} at dawn." for i in range(n_items)],
            "image_description": [
                f"A poster of scene {i} in {COLOURS[i % 6].lower()}." for i in range(n_items)
            ],
        }
    )
    return Dataset.from_frames("goldmovies", "movie", inter, items)


def shop_dataset(seed: int = 1, n_users: int = 90, n_items: int = 120, tie_share: float = 0.3) -> Dataset:
    gen = np.random.default_rng(seed)
    inter = _log(gen, n_users, n_items, tie_share)
    paths = []
    for i in range(n_items):
        root = ROOTS[i % 5]
        paths.append(
            [root, f"{root} / shelf {i % 3}", f"{root} / shelf {i % 3} / bin {i % 7}", f"Leaf {i % 11}"]
        )
    items = pd.DataFrame(
        {
            "item_id": [f"i{i}" for i in range(n_items)],
            "title": [f"Gizmo {i}" for i in range(n_items)],
            "brand": [BRANDS[(i * 7) % 6] for i in range(n_items)],
            "color": [COLOURS[(i * 5) % 6] for i in range(n_items)],
            "categories": paths,
        }
    )
    return Dataset.from_frames("goldshop", "product", inter, items)


def build(dataset: Dataset, out: Path, per_measure: int = 40, *, neural: bool = False) -> Path:
    """Every measure the dataset has; the neural ones only with ``neural`` (training NeuMF takes 20 s)."""
    from recworld.lrworld.catalogue import MEASURES
    from recworld.lrworld.measure import NeuralSpec

    measures = None if neural else tuple(m.id for m in MEASURES if not isinstance(m.builder, NeuralSpec))
    config = BuildConfig(per_measure=per_measure, neumf=FAST_NEUMF, measures=measures)
    build_suite(dataset, config, out)
    return out


def question_rows(suite: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        f.stem: [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
        for f in sorted((suite / "questions").glob("*.jsonl"))
    }


@dataclasses.dataclass(frozen=True)
class Planted:
    """A copy of a suite with its evidence stripped and some labels moved to a wrong option."""

    suite: Path
    moved: dict[str, bool]  # question id -> its label was moved
    truth: dict[str, int]  # question id -> the original (right) answer index


def plant(suite: Path, out: Path, *, seed: int, share: float = 0.5, evidence: Any = None) -> Planted:
    """Copy ``suite`` to ``out``; each question's label moves with probability ``share``.

    ``evidence`` replaces every question's evidence (``{}``: stripped; a callable of the row gives decoys).
    """
    shutil.copytree(suite, out)
    gen = np.random.default_rng(seed)
    moved: dict[str, bool] = {}
    truth: dict[str, int] = {}
    for path in sorted((out / "questions").glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for row in rows:
            n, right = len(row["candidates"]), int(row["answer_index"])
            truth[row["id"]] = right
            moved[row["id"]] = bool(gen.random() < share)
            if moved[row["id"]]:
                row["answer_index"] = int((right + 1 + gen.integers(n - 1)) % n)
            row["evidence"] = evidence(row) if callable(evidence) else dict(evidence or {})
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return Planted(out, moved, truth)


# -- a model that searches its whole request for the gold ----------------------------------------------


def leaves(obj: Any, path: str = "request", seen: set[int] | None = None) -> Iterator[tuple[str, Any]]:
    """Every scalar reachable from ``obj``, with the path of attribute names, keys and indices to it.

    It reads what a model could read off the object: dataclass fields, pydantic fields (and any
    extra or private values), ``__dict__``, ``__slots__`` and the properties its class defines.
    """
    seen = set() if seen is None else seen
    if obj is None or isinstance(obj, bool | int | float | str | bytes):
        yield path, obj
        return
    if id(obj) in seen or isinstance(obj, type) or callable(obj):
        return
    seen.add(id(obj))
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            yield from leaves(value, f"{path}[{key!r}]", seen)
        return
    if isinstance(obj, list | tuple | set | frozenset):
        for i, value in enumerate(obj):
            yield from leaves(value, f"{path}[{i}]", seen)
        return
    names: dict[str, Any] = {}
    if dataclasses.is_dataclass(obj):
        names.update({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    if isinstance(obj, BaseModel):
        names.update({k: getattr(obj, k) for k in type(obj).model_fields})
        names.update(obj.__pydantic_extra__ or {})
        names.update(obj.__pydantic_private__ or {})
    else:
        names.update(getattr(obj, "__dict__", {}) or {})
        for slot in getattr(type(obj), "__slots__", ()):
            if isinstance(slot, str) and hasattr(obj, slot):
                names[slot] = getattr(obj, slot)
    for klass in type(obj).__mro__:
        if klass.__module__.startswith("pydantic"):  # the library's own (deprecated) accessors
            continue
        for attr, member in vars(klass).items():
            if isinstance(member, property) and attr not in names:
                try:
                    names[attr] = getattr(obj, attr)
                except Exception:
                    continue
    for name, value in names.items():
        yield from leaves(value, f"{path}.{name}", seen)


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


GOLD_WORDS = ("answer", "gold", "label", "correct", "evidence", "truth", "position", "next_item")


def cheat(request: Any) -> tuple[int, str]:
    """The option a cheater picks from everything ``request`` holds, and which clue it used."""
    question = request.question
    options = list(question.candidates)
    n = len(options)
    found = list(leaves(request))
    # 1. a field whose name says answer, label, gold...: an index in range, or an option's id or text.
    for path, value in found:
        last = path.rsplit(".", 1)[-1].casefold()
        if not any(w in last for w in GOLD_WORDS) or last in ("labels",):
            continue
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n:
            return value, f"index {path}"
    # 2. an option's id or text anywhere outside the option list, the choices and the messages.
    votes = [0] * n
    for path, value in found:
        if not isinstance(value, str) or ".candidates" in path or ".choices" in path or ".messages" in path:
            continue
        for i, option in enumerate(options):
            if value == option.id or _fold(value) == _fold(option.text):
                votes[i] += 1
    if max(votes) > 0 and votes.count(max(votes)) == 1:
        return votes.index(max(votes)), "option named outside the options"
    # 3. nothing: a seeded guess, so its score is chance.
    digest = sum(ord(ch) * (k + 1) for k, ch in enumerate(question.id))
    return int(np.random.default_rng(digest).integers(n)), "guess"


class CheatingModel:
    """A model object that answers with whatever gold it can find in its request."""

    def __init__(self) -> None:
        self.clues: list[str] = []
        self.requests: list[Request] = []

    @property
    def identity(self) -> Mapping[str, str]:
        return {"backend": "cheater", "model": "search-the-request"}

    @property
    def supports(self) -> frozenset[AnswerMode]:
        return frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK})

    async def complete(self, request: Request) -> Response:
        self.requests.append(request)
        index, clue = cheat(request)
        self.clues.append(clue)
        if request.mode is AnswerMode.LOGLIK:
            scores = tuple(0.0 if i == index else -5.0 for i in range(len(request.choices)))
            return Response(text=request.choices[index], choice_logprobs=scores, usage=Usage(0, 0))
        return Response(text=request.choices[index], usage=Usage(0, 0))

    async def aclose(self) -> None:
        return None


def above_chance_p(hits: int, n: int, chance: float) -> float:
    """One-sided binomial p-value of ``hits`` or more out of ``n`` at ``chance``."""
    return float(sum(math.comb(n, k) * chance**k * (1 - chance) ** (n - k) for k in range(hits, n + 1)))
