"""Runner throughput and overhead against a local no-op OpenAI-compatible server.

Measured side by side in one run, on the same prompts and the same server
(a minimal asyncio HTTP/1.1 server in a subprocess that returns a fixed
completion instantly, so the client side is what gets measured):

* raw: ``openai.AsyncOpenAI`` calls bounded by a semaphore (the floor);
* runner: ``recworld`` Runner over the ``openai:`` backend, cache disabled;
* runner+cache: the same with a cold SQLite response cache (the eval default);
* lm-eval: ``local-chat-completions`` with ``num_concurrent`` = the same
  concurrency, run by ``bench/_lmeval_driver.py`` inside a separate venv
  (``--lmeval-venv``, created with ``pip install 'lm-eval[api]'`` on first use)
  so lm-eval never becomes a dependency of RecWorld;
* runner machinery alone: the Runner over an in-process model that answers
  instantly (microseconds of bookkeeping per request).

Each measurement is repeated ``--reps`` times; medians are printed, with the
ratio runner / lm-eval throughput (target: at least 3x).

    .venv/bin/python bench/bench_runner.py [--n 2000] [--concurrency 64] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_VENV = Path("/tmp/recworld-bench-lmeval")
_BODY = json.dumps(
    {
        "id": "chatcmpl-noop",
        "object": "chat.completion",
        "created": 0,
        "model": "noop",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "B"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 1, "total_tokens": 51},
    }
).encode()
_REPLY = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(_BODY)).encode()
    + b"\r\n\r\n"
    + _BODY
)


# --- the no-op server (runs in its own process) ---------------------------------------------


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:  # keep-alive: many requests per connection
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
            writer.write(_REPLY)
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve() -> None:
    server = await asyncio.start_server(_handle, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    async with server:
        await server.serve_forever()


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}/v1"


# --- the clients -----------------------------------------------------------------------------


def prompts(n: int) -> list[str]:
    return [
        f"Question {i}: a user watched Movie {i % 97}, Movie {i % 89} and Movie {i % 83}. "
        "Which movie will they watch next? A. Alpha B. Beta C. Gamma D. Delta. Answer with one letter."
        for i in range(n)
    ]


def http_client(aiohttp: bool) -> Any:
    """None (the SDK's httpx default) or the SDK's aiohttp transport (needs ``httpx-aiohttp``)."""
    if not aiohttp:
        return None
    import openai

    return openai.DefaultAioHttpClient()


async def run_raw(base_url: str, texts: list[str], concurrency: int, aiohttp: bool) -> float:
    import openai

    client = openai.AsyncOpenAI(
        base_url=base_url, api_key="EMPTY", max_retries=0, http_client=http_client(aiohttp)
    )
    gate = asyncio.Semaphore(concurrency)

    async def one(text: str) -> str:
        async with gate:
            reply = await client.chat.completions.create(
                model="noop", messages=[{"role": "user", "content": text}], max_tokens=16, temperature=0.0
            )
        return reply.choices[0].message.content or ""

    start = time.perf_counter()
    answers = await asyncio.gather(*(one(t) for t in texts))
    elapsed = time.perf_counter() - start
    await client.close()
    assert answers.count("B") == len(texts)
    return elapsed


async def run_ours(
    base_url: str, texts: list[str], concurrency: int, cache_dir: Path | None, aiohttp: bool
) -> float:
    from recworld.models.base import Message, Request
    from recworld.models.openai_compat import OpenAICompatModel
    from recworld.models.registry import ModelConfig
    from recworld.runner import ResponseCache, Runner, RunnerConfig

    model = OpenAICompatModel("noop", ModelConfig(base_url=base_url), http_client=http_client(aiohttp))
    cache = ResponseCache(cache_dir / "cache.sqlite") if cache_dir is not None else None
    runner = Runner(model, RunnerConfig(concurrency=concurrency, progress=False), cache)
    requests = [Request(messages=(Message("user", t),), max_tokens=16, temperature=0.0) for t in texts]
    start = time.perf_counter()
    results = await runner.map(requests)
    elapsed = time.perf_counter() - start
    await runner.aclose()
    if cache is not None:
        cache.close()
    assert all(r.response is not None and r.response.text == "B" for r in results), runner.stats
    return elapsed


async def run_machinery(texts: list[str], concurrency: int) -> float:
    from recworld.models.base import AnswerMode, Message, Request, Response
    from recworld.runner import Runner, RunnerConfig

    class Instant:
        identity: Mapping[str, str] = {"backend": "instant", "model": "noop"}
        supports = frozenset({AnswerMode.GENERATE})

        async def complete(self, request: Request) -> Response:
            return Response(text="B")

        async def aclose(self) -> None:
            return None

    runner = Runner(Instant(), RunnerConfig(concurrency=concurrency, progress=False))
    requests = [Request(messages=(Message("user", t),), max_tokens=16) for t in texts]
    start = time.perf_counter()
    await runner.map(requests)
    return time.perf_counter() - start


def ensure_lmeval(venv: Path) -> Path | None:
    """The venv's python, creating the venv with lm-eval[api] on first use; None if that fails."""
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import lm_eval.models.openai_completions"]
    if python.exists() and subprocess.run(check, capture_output=True, check=False).returncode == 0:
        return python
    print(f"creating {venv} with lm-eval[api] (one-time)...", flush=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(python), "-m", "pip", "install", "-q", "lm-eval[api]"],
    ]
    for step in steps:
        if subprocess.run(step, check=False).returncode != 0:
            return None
    return python if subprocess.run(check, capture_output=True, check=False).returncode == 0 else None


def run_lmeval(python: Path, base_url: str, texts_file: Path, concurrency: int) -> float:
    out = subprocess.run(
        [str(python), str(HERE / "_lmeval_driver.py"), base_url, str(texts_file), str(concurrency)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
    )
    if out.returncode != 0:
        raise RuntimeError(f"lm-eval driver failed:\n{out.stderr[-3000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result["seconds"]


def median_of(reps: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(reps))


def arun(factory: Callable[[], Coroutine[Any, Any, float]]) -> Callable[[], float]:
    return lambda: asyncio.run(factory())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--lmeval-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--skip-lmeval", action="store_true")
    parser.add_argument(
        "--aiohttp",
        action="store_true",
        help="use the openai SDK's aiohttp transport (needs httpx-aiohttp; e.g. run with the lm-eval venv)",
    )
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve())
        return

    texts = prompts(args.n)
    n, c = args.n, args.concurrency
    server, base_url = start_server()
    rows: dict[str, float] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            raw = arun(lambda: run_raw(base_url, texts, c, args.aiohttp))
            rows["raw AsyncOpenAI + semaphore"] = median_of(args.reps, raw)
            rows["recworld Runner (no cache)"] = median_of(
                args.reps, arun(lambda: run_ours(base_url, texts, c, None, args.aiohttp))
            )

            def cold_cache() -> float:
                with tempfile.TemporaryDirectory(dir=tmp) as fresh:
                    return asyncio.run(run_ours(base_url, texts, c, Path(fresh), args.aiohttp))

            rows["recworld Runner (cold cache)"] = median_of(args.reps, cold_cache)
            machinery = median_of(args.reps, arun(lambda: run_machinery(texts, c)))
            if not args.skip_lmeval:
                python = ensure_lmeval(args.lmeval_venv)
                if python is None:
                    print("lm-eval venv unavailable; skipping the comparison")
                else:
                    texts_file = Path(tmp) / "texts.json"
                    texts_file.write_text(json.dumps(texts))
                    rows["lm-eval local-chat-completions"] = median_of(
                        args.reps, lambda: run_lmeval(python, base_url, texts_file, c)
                    )
    finally:
        server.terminate()
        server.wait(10)

    transport = "aiohttp" if args.aiohttp else "httpx"
    print(f"\n{n} requests, concurrency {c}, median of {args.reps} runs, openai SDK over {transport}")
    print(f"{'client':34s} {'seconds':>8s} {'req/s':>9s}")
    for name, seconds in rows.items():
        print(f"{name:34s} {seconds:8.3f} {n / seconds:9.1f}")
    raw, ours = rows["raw AsyncOpenAI + semaphore"], rows["recworld Runner (no cache)"]
    print(f"\nrunner overhead vs raw: {(ours - raw) / n * 1e6:+.1f} us/request ({ours / raw:.2f}x raw time)")
    print(f"runner machinery alone (in-process instant model): {machinery / n * 1e6:.1f} us/request")
    if "lm-eval local-chat-completions" in rows:
        ratio = rows["lm-eval local-chat-completions"] / ours
        print(f"throughput ratio runner / lm-eval: {ratio:.2f}x (target >= 3x)")


if __name__ == "__main__":
    main()
