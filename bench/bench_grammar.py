"""Grammar-first (llama-cpp-python's chain) vs grammar-last (recworld) decoding on LUNAR's compact schemas.

For each LUNAR decoding schema (``compact_schema(inline_schema(Draft))``, as
``StructuredLLM`` sends them) and a few prompts, measured in one run, side by side:

* old: a plain ``llama_cpp.Llama.create_completion(grammar=...)``, the grammar
  applied to the whole vocabulary before every token;
* new: ``load_model("llamacpp:...")``, which checks the sampled token first
  (:mod:`recworld.models.llamacpp_sampling`).

Both decode greedily from the same prompt tokens, on one thread; the script
prints the median CPU seconds per reply of each (process time: on a busy 2-core
machine wall time mostly measures the other processes), the ratio, tokens per
reply, how many tokens the grammar rejected on the first draw, and whether the
two texts are equal.

Usage: python bench/bench_grammar.py [--model llamacpp:smollm2-135m] [--repeats 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from typing import Any

from recworld.lunar.llm.decoding import compact_schema, inline_schema
from recworld.lunar.queries.generate import QueryDraft
from recworld.lunar.synth.records import RecordsDraft
from recworld.models import Message, ModelConfig, Request, load_model
from recworld.models.llamacpp import resolve_model_path

N_CTX = 2048
PROMPTS = (
    "Write one request a user might ask a personal assistant about their movies. Reply in JSON.",
    "The user watched Heat and Casino this week. Write what they did on Monday morning as JSON.",
    "You are a recommender. Reply with a JSON object only.",
)
SCHEMAS = {"QueryDraft": QueryDraft, "RecordsDraft": RecordsDraft}


def old_path(llm: Any, tokens: list[int], schema: Any, max_tokens: int) -> tuple[float, str]:
    import llama_cpp

    start = time.process_time()
    grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    llm.reset()
    out = llm.create_completion(prompt=tokens, max_tokens=max_tokens, temperature=0.0, grammar=grammar)
    return time.process_time() - start, str(out["choices"][0]["text"])


def new_path(model: Any, request: Request) -> tuple[float, str, int, int]:
    start = time.process_time()
    response = asyncio.run(model.complete(request))
    elapsed = time.process_time() - start
    sampler = model._llm._sampler
    return elapsed, response.text, response.usage.completion_tokens, sampler.resampled


def compare(model: Any, llm: Any, repeats: int, max_tokens: int) -> None:
    """One row per (schema, prompt): median CPU seconds of each path, interleaved repeats."""
    head = ("prompt", "old cpu", "new cpu", "old/new", "tokens", "rejected")
    print(f"{'schema':<13} " + " ".join(f"{h:>8}" for h in head) + " equal")
    olds, news = [], []
    for name, draft in SCHEMAS.items():
        schema = compact_schema(inline_schema(draft))
        for i, prompt in enumerate(PROMPTS):
            request = Request((Message("user", prompt),), json_schema=schema, max_tokens=max_tokens)
            tokens = model.prompt_tokens(request.messages)
            old_s, new_s = [], []
            for _ in range(repeats):  # interleaved so load drifts hit both alike
                elapsed, old_text = old_path(llm, tokens, schema, max_tokens)
                old_s.append(elapsed)
                elapsed, new_text, n_tokens, rejected = new_path(model, request)
                new_s.append(elapsed)
            old, new = statistics.median(old_s), statistics.median(new_s)
            olds.append(old)
            news.append(new)
            equal = "yes" if old_text == new_text else "NO"
            cells = f"{i:>8} {old:>8.3f} {new:>8.3f} {old / new:>7.1f}x {n_tokens:>8} {rejected:>8}"
            print(f"{name:<13} {cells} {equal}")
    old, new = sum(olds), sum(news)
    print(f"sum of medians: old {old:.2f} CPU s, new {new:.2f} CPU s, old/new {old / new:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llamacpp:smollm2-135m")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import llama_cpp

    model = load_model(args.model, ModelConfig(n_ctx=N_CTX, n_threads=args.threads))
    path = resolve_model_path(args.model.split(":", 1)[1])
    threads = args.threads
    llm = llama_cpp.Llama(
        model_path=str(path), n_ctx=N_CTX, n_threads=threads, n_threads_batch=threads, verbose=False
    )
    load = os.getloadavg()[0]
    print(f"model {args.model}, threads {threads}, load average {load:.1f}, repeats {args.repeats}")
    compare(model, llm, args.repeats, args.max_tokens)
    llm.close()
    asyncio.run(model.aclose())


if __name__ == "__main__":
    main()
