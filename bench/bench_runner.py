"""Runner throughput and overhead against a local OpenAI-compatible server, instant and "thinking".

Measured side by side in one run, on the same prompts and the same server
(a minimal asyncio-protocol HTTP/1.1 keep-alive server in a subprocess that
returns a fixed completion instantly, so the client side is what gets measured):

* SDK create: ``openai.AsyncOpenAI.chat.completions.create`` bounded by a
  semaphore (what a plain SDK user gets);
* backend direct: ``OpenAICompatModel.complete`` (default ``aiohttp``
  transport) bounded by a semaphore, no runner: the floor the runner is compared with;
* runner: the ``recworld`` Runner over the ``openai:`` backend, cache disabled,
  on the ``aiohttp`` transport (the default for a ``base_url``) and on the ``sdk``
  transport; and with a cold SQLite response cache (the eval default);
* lm-eval: ``local-chat-completions`` with ``num_concurrent`` = the same
  concurrency, run by ``bench/_lmeval_driver.py`` inside a separate venv
  (``--lmeval-venv``, created with ``pip install 'lm-eval[api]'`` on first use)
  so lm-eval never becomes a dependency of RecWorld;
* runner machinery alone: the Runner over an in-process model that answers
  instantly (microseconds of bookkeeping per request).

Repeats run round-robin (every client once per round) so load from other
processes hits all clients alike; medians over ``--reps`` rounds are printed
with the runner's wall time per request (target: at most 0.5 ms at
concurrency 64) and the ratios runner / lm-eval throughput, with the cache on
(the eval default; target >= 1.2) and off.

A second part repeats the backend, the runner with its cache and lm-eval
against the same server holding every reply ``--think-ms`` (20 ms), as a real
model server does, at each ``--think-concurrency`` (16 and 64): the harness's
share of the wall time is the time beyond what the server alone needs
(``ceil(n / concurrency)`` waves of 20 ms; target under 2 %), and beyond the
bare backend.

    .venv/bin/python bench/bench_runner.py [--n 2000] [--concurrency 64] [--reps 3] [--skip-sdk]
        [--think-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
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
# The tests' harness venv (tests/export/harness.py builds it, lm-eval pinned) when it is there.
HARNESS_VENV = HERE.parent / "tests" / ".data" / "harness-venv"
SCRATCH_VENV = Path("/tmp/recworld-bench-lmeval")
DEFAULT_VENV = HARNESS_VENV if (HARNESS_VENV / "bin" / "python").exists() else SCRATCH_VENV
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


class _NoopServer(asyncio.Protocol):
    """Answers every request with the same bytes; parses only Content-Length (keep-alive).

    ``DELAY_S`` > 0 holds each reply that long (a server "thinking" for 20 ms), without
    blocking other connections.
    """

    DELAY_S = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        buf = self.buffer + data
        replies = 0
        while True:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                break
            start = buf.lower().find(b"content-length:", 0, end)
            length = int(buf[start + 15 : buf.find(b"\r\n", start)]) if start >= 0 else 0
            if len(buf) < end + 4 + length:
                break
            buf = buf[end + 4 + length :]
            replies += 1
        self.buffer = buf
        if replies and self.DELAY_S > 0:
            asyncio.get_running_loop().call_later(self.DELAY_S, self._write, _REPLY * replies)
        elif replies:
            self.transport.write(_REPLY * replies)

    def _write(self, data: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(data)


async def _serve(delay_ms: float) -> None:
    _NoopServer.DELAY_S = delay_ms / 1000.0
    loop = asyncio.get_running_loop()
    server = await loop.create_server(_NoopServer, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    async with server:
        await server.serve_forever()


def start_server(delay_ms: float = 0.0) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, __file__, "--serve", "--delay-ms", str(delay_ms)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
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


def backend(base_url: str, transport: str, aiohttp: bool) -> Any:
    from recworld.models.openai_compat import OpenAICompatModel
    from recworld.models.registry import ModelConfig

    config = ModelConfig(base_url=base_url, options={"transport": transport})
    client = http_client(aiohttp) if transport == "sdk" else None
    return OpenAICompatModel("noop", config, http_client=client)


async def run_direct(base_url: str, texts: list[str], concurrency: int) -> float:
    """The backend's ``complete`` bounded by a semaphore, without the runner."""
    from recworld.chat import Message, Request

    model = backend(base_url, "aiohttp", False)
    gate = asyncio.Semaphore(concurrency)
    requests = [Request(messages=(Message("user", t),), max_tokens=16, temperature=0.0) for t in texts]

    async def one(request: Request) -> str:
        async with gate:
            return str((await model.complete(request)).text)

    start = time.perf_counter()
    answers = await asyncio.gather(*(one(r) for r in requests))
    elapsed = time.perf_counter() - start
    await model.aclose()
    assert answers.count("B") == len(texts)
    return elapsed


async def run_ours(
    base_url: str, texts: list[str], concurrency: int, cache_dir: Path | None, transport: str, aiohttp: bool
) -> float:
    from recworld.chat import Message, Request
    from recworld.runner import ResponseCache, Runner, RunnerConfig

    model = backend(base_url, transport, aiohttp)
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
    from recworld.chat import AnswerMode, Message, Request, Response
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


def round_robin(reps: int, clients: dict[str, Callable[[], float]]) -> dict[str, float]:
    """Median seconds per client, each client measured once per round."""
    times: dict[str, list[float]] = {name: [] for name in clients}
    for _ in range(reps):
        for name, measure in clients.items():
            times[name].append(measure())
    return {name: statistics.median(values) for name, values in times.items()}


def arun(factory: Callable[[], Coroutine[Any, Any, float]]) -> Callable[[], float]:
    return lambda: asyncio.run(factory())


SDK_CREATE = "SDK chat.completions.create"
DIRECT = "backend direct (aiohttp)"
OURS = "Runner, aiohttp, no cache"
CACHED = "Runner, aiohttp, cold cache (default)"
LMEVAL = "lm-eval local-chat-completions"
MACHINERY = "runner machinery alone"


def clients_for(
    base_url: str, texts: list[str], args: argparse.Namespace, tmp: Path, *, full: bool, c: int
) -> dict[str, Callable[[], float]]:
    """The clients measured against one server at concurrency ``c``; ``full`` adds machinery and SDK rows."""

    def cold_cache() -> float:
        with tempfile.TemporaryDirectory(dir=tmp) as fresh:
            return asyncio.run(run_ours(base_url, texts, c, Path(fresh), "aiohttp", False))

    clients: dict[str, Callable[[], float]] = {
        DIRECT: arun(lambda: run_direct(base_url, texts, c)),
        OURS: arun(lambda: run_ours(base_url, texts, c, None, "aiohttp", False)),
        CACHED: cold_cache,
    }
    if full:
        clients[MACHINERY] = arun(lambda: run_machinery(texts, c))
    if full and not args.skip_sdk:
        clients[SDK_CREATE] = arun(lambda: run_raw(base_url, texts, c, args.aiohttp))
        clients["Runner, sdk transport, no cache"] = arun(
            lambda: run_ours(base_url, texts, c, None, "sdk", args.aiohttp)
        )
    if not args.skip_lmeval:
        python = ensure_lmeval(args.lmeval_venv)
        if python is None:
            print("lm-eval venv unavailable; skipping the comparison")
        else:
            texts_file = tmp / "texts.json"
            texts_file.write_text(json.dumps(texts))
            clients[LMEVAL] = lambda: run_lmeval(python, base_url, texts_file, c)
    return clients


def measure(
    delay_ms: float, texts: list[str], args: argparse.Namespace, *, full: bool, c: int
) -> dict[str, float]:
    server, base_url = start_server(delay_ms)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return round_robin(args.reps, clients_for(base_url, texts, args, Path(tmp), full=full, c=c))
    finally:
        server.terminate()
        server.wait(10)


def table(title: str, rows: Mapping[str, float], n: int) -> None:
    print(f"\n{title}")
    print(f"{'client':40s} {'seconds':>8s} {'req/s':>9s}")
    for name, seconds in rows.items():
        print(f"{name:40s} {seconds:8.3f} {n / seconds:9.1f}")


def report_noop(rows: dict[str, float], args: argparse.Namespace) -> None:
    n = args.n
    machinery = rows.pop(MACHINERY)
    transport = "aiohttp" if args.aiohttp else "httpx"
    table(f"no-op server: {n} requests, concurrency {args.concurrency}, median of {args.reps} rounds "
          f"(SDK rows over {transport})", rows, n)  # fmt: skip
    direct, ours, cached = rows[DIRECT], rows[OURS], rows[CACHED]
    print(f"\nrunner wall time per request (target <= 500 us): {ours / n * 1e6:.1f} us/request")
    print(f"runner overhead vs backend direct: {(ours - direct) / n * 1e6:+.1f} us/request")
    print(f"the cache's cost: {(cached - ours) / n * 1e6:+.1f} us/request")
    print(f"runner machinery alone (in-process instant model): {machinery / n * 1e6:.1f} us/request")
    if LMEVAL in rows:
        print(f"lm-eval wall time per request: {rows[LMEVAL] / n * 1e6:.1f} us/request")
        ratio = rows[LMEVAL] / cached
        print(f"throughput ratio runner with cache (the default) / lm-eval: {ratio:.2f}x (target >= 1.2)")
        print(f"throughput ratio runner without cache / lm-eval: {rows[LMEVAL] / ours:.2f}x")


def report_think(rows: dict[str, float], args: argparse.Namespace, c: int) -> None:
    n, think = args.n, args.think_ms / 1000.0
    ideal = math.ceil(n / c) * think  # waves of c requests, each answered in `think` seconds
    table(f"server answering in {args.think_ms:g} ms: {n} requests, concurrency {c}, "
          f"median of {args.reps} rounds; the server alone needs {ideal:.3f} s", rows, n)  # fmt: skip
    cached, direct = rows[CACHED], rows[DIRECT]
    over_server, over_backend = (cached - ideal) / cached, (cached - direct) / cached
    print(
        f"\nharness share of wall time, runner with cache: {over_server:.1%} over the server's own time, "
        f"{over_backend:+.1%} over the bare backend (target < 2 %)"
    )
    if LMEVAL in rows:
        print(
            f"lm-eval: {(rows[LMEVAL] - ideal) / rows[LMEVAL]:.1%} over the server's own time; "
            f"ratio runner with cache / lm-eval {rows[LMEVAL] / cached:.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--delay-ms", type=float, default=0.0, help=argparse.SUPPRESS)
    parser.add_argument(
        "--think-ms", type=float, default=20.0, help="the slow server's answer time (0 skips that part)"
    )
    parser.add_argument(
        "--think-concurrency",
        default="16,64",
        help="concurrencies for the slow server, comma-separated (at 64 this 2-core box's HTTP client, "
        "not the harness, is the limit)",
    )
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--lmeval-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--skip-lmeval", action="store_true")
    parser.add_argument("--skip-sdk", action="store_true", help="leave out the slow openai-SDK rows")
    parser.add_argument(
        "--aiohttp",
        action="store_true",
        help="use the openai SDK's aiohttp transport (needs httpx-aiohttp; e.g. run with the lm-eval venv)",
    )
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.delay_ms))
        return
    print(f"load average before: {_load()}", flush=True)
    texts = prompts(args.n)
    noop = measure(0.0, texts, args, full=True, c=args.concurrency)
    levels = [int(c) for c in args.think_concurrency.split(",")] if args.think_ms > 0 else []
    thinking = {c: measure(args.think_ms, texts, args, full=False, c=c) for c in levels}
    report_noop(noop, args)
    for c, rows in thinking.items():
        report_think(rows, args, c)
    print(f"\nload average after: {_load()} (2-core machine shared; ratios come from this one run)")


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


if __name__ == "__main__":
    main()
