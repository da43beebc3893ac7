"""Synthetic runs in the runner's exact file formats (samples.jsonl, run.json, metrics.json)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from recworld.lrworld.catalogue import MEASURES_BY_ID
from recworld.scoring import score_samples

MOVIE_MEASURES = (
    "assoc_rule",
    "mem_item_item",
    "mem_user_user",
    "neu_item2users",
    "neu_user2items",
    "kg_movie_cast",
    "kg_movie_director",
    "kg_movie_genre",
    "text_logline",
)
PRODUCT_MEASURES = ("assoc_rule", "mem_item_item", "kg_prod_brand", "taxo_leaf", "taxo_root")

# A policy maps (rng, answer_index, n_options) to a parsed index or None (a miss).
Policy = Callable[[np.random.Generator, int, int], "int | None"]


def skilled(p: float, miss: float = 0.0) -> Policy:
    def answer(draw: np.random.Generator, gold: int, n: int) -> int | None:
        u = draw.random()
        if u < miss:
            return None
        if u < miss + p:
            return gold
        return int(draw.integers(n))

    return answer


def always_first(miss: float = 0.0) -> Policy:
    def answer(draw: np.random.Generator, gold: int, n: int) -> int | None:
        return None if draw.random() < miss else 0

    return answer


def perfect() -> Policy:
    def answer(draw: np.random.Generator, gold: int, n: int) -> int | None:
        return gold

    return answer


def never() -> Policy:
    """Always a wrong option (0/n): the edge an interval must not collapse at."""

    def answer(draw: np.random.Generator, gold: int, n: int) -> int | None:
        return (gold + 1) % n

    return answer


def write_run(
    run_dir: Path,
    *,
    model: str,
    dataset: str,
    measures: tuple[str, ...],
    policy: Policy,
    n: int = 40,
    seed: int = 0,
    mode: str = "generate",
    variant: str = "zero-shot",
    orders: int = 1,
    errors: int = 0,
    first: int = 0,
    fingerprint: str = "f" * 64,
) -> list[dict[str, Any]]:
    """A run over questions ``first .. first + n - 1`` of each measure; the last ``errors`` of them failed.

    With ``orders`` > 1 every question is asked in that many orders (ids ``<id>#o<k>``), its answer
    moved by the order so the key differs between copies, as the evaluation's permutations do.
    """
    draw = np.random.default_rng(seed)
    samples: list[dict[str, Any]] = []
    for measure in measures:
        fmt = MEASURES_BY_ID[measure].format
        labels = list("ABCDEFGHIJ"[: fmt.n_options])
        for q in range(first, first + n):
            base = f"{dataset}/{measure}/{q:05d}"
            for order in range(orders):
                qid = base if order == 0 else f"{base}#o{order}"
                gold = (
                    zlib.crc32(base.encode()) + order
                ) % fmt.n_options  # the suite's key, moved by the order
                failed = q >= first + n - errors
                parsed = None if failed else policy(draw, gold, fmt.n_options)
                samples.append(
                    {
                        "schema": "recworld.sample/2",
                        "question_id": qid,
                        "measure": measure,
                        "dataset": dataset,
                        "format": fmt.value,
                        "model": model,
                        "mode": mode,
                        "variant": variant,
                        "prompt": [{"role": "user", "content": "..."}],
                        "labels": labels,
                        "answer_index": gold,
                        "response": None
                        if failed
                        else ("I cannot tell" if parsed is None else labels[parsed]),
                        "choice_logprobs": None,
                        "parsed_index": parsed,
                        "correct": None if failed else parsed == gold,
                        "missed": None if failed else parsed is None,
                        "latency_s": 0.01,
                        "usage": {"prompt_tokens": 10, "completion_tokens": 1},
                        "cache_hit": False,
                        "attempts": 1,
                        "error": "ServerError: 500" if failed else None,
                        "order": order,
                    }
                )
    samples.sort(key=lambda s: (s["measure"], s["question_id"]))
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    run = {
        "schema": "recworld.run/2",
        "model": model,
        "mode": mode,
        "variant": variant,
        "suite": str(run_dir.parent.parent),
        "suite_fingerprint": fingerprint,
        "dataset": dataset,
        "measures": list(measures),
        "limit": n,
        "started": "2025-01-01T10:00:00Z",
        "finished": "2025-01-01T10:05:00Z",
        "status": "finished",
        "counts": {
            "questions": len(samples),
            "answered": len(samples) - errors * len(measures),
            "errors": errors * len(measures),
        },
    }
    (run_dir / "run.json").write_text(json.dumps(run), encoding="utf-8")
    score_samples(samples).write(run_dir / "metrics.json")
    return samples


def make_suite(root: Path, dataset: str = "ml-100k") -> Path:
    suite = root / "suite"
    (suite / "runs").mkdir(parents=True)
    (suite / "manifest.json").write_text(json.dumps({"schema": "recworld.manifest/1", "dataset": dataset}))
    return suite
