"""Questions per second: ``recworld eval`` locally vs ``--engine ray`` with 1 and 2 replicas.

Runs a small fake suite (``tests/helpers/runner_fakes.write_suite``, ~20 questions)
through llama.cpp SmolLM2-135M, each configuration ``--repeats`` times in
round-robin order (the machine is shared: medians), every run in a fresh run
directory so nothing comes from a cache. One Ray session (``--cpus`` CPUs) is
started before timing; replica start-up and model loading are inside the timing,
as they are for a user. Two figures per configuration:

* end-to-end q/s: questions / wall time of ``evaluate()``;
* steady q/s: answers journaled between the first and the last one, over that
  time (start-up excluded), read by polling the journal.

Usage: python bench/bench_ray.py [--questions 20] [--repeats 3] [--model llamacpp:smollm2-135m]
(about 6 minutes with the defaults on 2 busy cores; --repeats 1 for a quick look)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from recworld.evaluation import JOURNAL_NAME, EvalConfig, evaluate_config
from recworld.runner import RunnerConfig
from recworld.testing.suites import write_suite


class JournalClock:
    """Polls a journal's line count, to time the answers apart from start-up."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        last = 0
        while not self._stop.is_set():
            n = self.path.read_bytes().count(b"\n") if self.path.exists() else 0
            if n != last:
                self.seen.append((time.perf_counter(), n))
                last = n
            time.sleep(0.02)

    def steady_rate(self) -> float:
        self._stop.set()
        self._thread.join()
        if len(self.seen) < 2:
            return float("nan")
        (t0, n0), (t1, n1) = self.seen[0], self.seen[-1]
        return (n1 - n0) / (t1 - t0) if t1 > t0 else float("nan")


def one_run(suite: Path, out: Path, model: str, engine: str, replicas: int) -> tuple[float, float]:
    clock = JournalClock(out / JOURNAL_NAME)
    started = time.perf_counter()
    config = EvalConfig(
        suite_dir=suite,
        model=model,
        out_dir=out,
        engine="ray" if engine == "ray" else "local",
        replicas=replicas,
        runner=RunnerConfig(progress=False),
    )
    evaluate_config(config)
    wall = time.perf_counter() - started
    n = (out / "samples.jsonl").read_text().count("\n")
    return n / wall, clock.steady_rate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--model", default="llamacpp:smollm2-135m")
    args = parser.parse_args()
    import ray

    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    half = args.questions // 2
    configs = {"local": ("local", 1), "ray x1": ("ray", 1), "ray x2": ("ray", 2)}
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
    with tempfile.TemporaryDirectory() as tmp:
        suite = write_suite(
            Path(tmp) / "suite", {"kg_movie_genre": half, "mem_item_item": args.questions - half}
        )
        for rep in range(args.repeats):
            for name, (engine, replicas) in configs.items():
                out = Path(tmp) / f"{name.replace(' ', '')}-{rep}"
                rates[name].append(one_run(suite, out, args.model, engine, replicas))
    ray.shutdown()
    base_e2e = statistics.median(r[0] for r in rates["local"])
    base_steady = statistics.median(r[1] for r in rates["local"])
    print(f"{args.model}, {args.questions} questions, median of {args.repeats}, Ray with {args.cpus} CPUs")
    print(f"{'engine':<8} {'end-to-end q/s':>15} {'ratio':>6} {'steady q/s':>11} {'ratio':>6}")
    for name, runs in rates.items():
        e2e = statistics.median(r[0] for r in runs)
        steady = statistics.median(r[1] for r in runs)
        print(f"{name:<8} {e2e:>15.2f} {e2e / base_e2e:>6.2f} {steady:>11.2f} {steady / base_steady:>6.2f}")


if __name__ == "__main__":
    main()
