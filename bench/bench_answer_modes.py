"""Loglik vs generate answer modes, and shared-prefix vs naive loglik, on a local GGUF.

Builds ~30 four-option genre questions from MovieLens-100K (RecBole's atomic
``ml-100k.item``), then measures in one run, side by side:

* questions/s in ``loglik`` mode (score "A".."D") vs ``generate`` mode
  (greedy, ``--max-tokens`` new tokens), median over ``--repeats``;
* seconds per question for shared-prefix loglik (prompt evaluated once) vs
  naive loglik (prompt re-evaluated for every choice), and that they agree.

Usage: python bench/bench_answer_modes.py [--model llamacpp:gemma3-270m] [--item PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from recworld.models import AnswerMode, Message, ModelConfig, Request, load_model
from recworld.seeding import rng

DEFAULT_ITEM = Path("/tmp/pdl/recbole/dataset_example/ml-100k/ml-100k.item")
LABELS = ("A", "B", "C", "D")


def genre_questions(item_file: Path, n: int, seed: int) -> list[tuple[tuple[Message, ...], int]]:
    """(messages, answer index) for n movies: one of its genres and three it lacks."""
    lines = item_file.read_text(encoding="latin-1").splitlines()
    header = [h.split(":")[0] for h in lines[0].split("\t")]
    rows = [dict(zip(header, line.split("\t"), strict=False)) for line in lines[1:]]
    all_genres = sorted({g for r in rows for g in r.get("class", "").split() if g})
    generator = rng(seed, "bench", "answer_modes")
    picks = generator.choice(len(rows), size=n, replace=False)
    out = []
    for index in picks:
        row = rows[int(index)]
        genres = row["class"].split()
        if not genres:
            continue
        wrong = [g for g in all_genres if g not in genres]
        options = [genres[0], *generator.choice(wrong, size=3, replace=False).tolist()]
        order = generator.permutation(4)
        shown = [options[i] for i in order]
        answer = int(np.flatnonzero(order == 0)[0])
        body = "\n".join(f"{label}. {text}" for label, text in zip(LABELS, shown, strict=True))
        prompt = (
            f"Which genre fits the movie {row['movie_title']} ({row.get('release_year', '?')})?\n"
            f"{body}\nAnswer with the letter only."
        )
        out.append(((Message("user", prompt),), answer))
    return out


async def answer_all(model: Any, requests: list[Request]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    texts = [(await model.complete(r)).text for r in requests]
    return time.perf_counter() - start, texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp:gemma3-270m")
    parser.add_argument("--item", type=Path, default=DEFAULT_ITEM)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--part", choices=("all", "modes", "prefix"), default="all")
    args = parser.parse_args()

    questions = genre_questions(args.item, args.questions, seed=0)
    model = load_model(args.model, ModelConfig(n_ctx=1024, n_threads=args.threads))
    print(f"model {args.model} identity {dict(model.identity)}")
    print(f"{len(questions)} questions, load average {os.getloadavg()[0]:.1f}, repeats {args.repeats}")

    if args.part in ("all", "modes"):
        compare_modes(model, questions, args.repeats, args.max_tokens)
    if args.part in ("all", "prefix") and hasattr(model, "score_tokens"):
        compare_prefix(model, questions, args.repeats)
    asyncio.run(model.aclose())


def compare_modes(
    model: Any, questions: list[tuple[tuple[Message, ...], int]], repeats: int, max_tokens: int
) -> None:
    """Questions/s in loglik vs generate mode (interleaved repeats, medians)."""
    loglik = [Request(m, mode=AnswerMode.LOGLIK, choices=LABELS) for m, _ in questions]
    generate = [Request(m, max_tokens=max_tokens) for m, _ in questions]
    rates: dict[str, list[float]] = {"loglik": [], "generate": []}
    texts: dict[str, list[str]] = {}
    for _ in range(repeats):  # interleaved so load drifts hit both modes alike
        for name, requests in (("loglik", loglik), ("generate", generate)):
            elapsed, texts[name] = asyncio.run(answer_all(model, requests))
            rates[name].append(len(requests) / elapsed)
    answers = [a for _, a in questions]
    loglik_acc = np.mean([LABELS.index(t) == a for t, a in zip(texts["loglik"], answers, strict=True)])
    generate_acc = np.mean(
        [t.strip()[:1] == LABELS[a] for t, a in zip(texts["generate"], answers, strict=True)]
    )
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"loglik   {med['loglik']:.2f} q/s (accuracy {loglik_acc:.2f})")
    print(f"generate {med['generate']:.2f} q/s (accuracy by first char {generate_acc:.2f})")
    print(f"loglik / generate throughput: {med['loglik'] / med['generate']:.2f}x")


def compare_prefix(model: Any, questions: list[tuple[tuple[Message, ...], int]], repeats: int) -> None:
    """Shared-prefix loglik (prompt evaluated once) vs naive (prompt re-evaluated per choice)."""
    timings: dict[str, list[float]] = {"shared": [], "naive": []}
    worst = 0.0
    shared_scores: list[list[float]] = []
    for _ in range(repeats):
        for mode in ("shared", "naive"):
            start = time.perf_counter()
            scores = []
            for messages, _ in questions:
                prefix = model.prompt_tokens(messages)
                options = [model.choice_tokens(c) for c in LABELS]
                scores.append(model.score_tokens(prefix, options, shared_prefix=mode == "shared"))
            timings[mode].append((time.perf_counter() - start) / len(questions))
            if mode == "shared":
                shared_scores = scores
            else:
                worst = max(worst, float(np.max(np.abs(np.array(scores) - np.array(shared_scores)))))
    shared, naive = (statistics.median(timings[k]) for k in ("shared", "naive"))
    print(f"shared-prefix loglik {shared * 1000:.1f} ms/question, naive {naive * 1000:.1f} ms/question")
    print(f"naive / shared time: {naive / shared:.2f}x; max |score difference| {worst:.2e}")


if __name__ == "__main__":
    main()
