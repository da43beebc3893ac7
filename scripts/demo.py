"""`make demo`: the main job end to end on the embedded default data and model.

1. fetch MovieLens-100K (from the recbole wheel on PyPI; no other network),
2. build the LRWorld suite,
3. evaluate the classic baselines and the local SmolLM2-135M-Instruct GGUF in rank mode
   (each option's text scored as a continuation: a 135M model asked for a letter answers
   "A" to nearly everything, so its letter-choice row would say nothing),
4. write the report and print where it is.

Every step resumes: rerunning after an interruption reuses what is done.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from recworld.cli import main as recworld

BASELINES = ("random", "popularity", "itemknn", "oracle")  # oracle: the ground truth recomputed, ~1.0
LLM = "llamacpp:smollm2-135m"


def step(title: str, argv: list[str]) -> None:
    print(f"\n== {title}\n$ recworld {' '.join(argv)}", flush=True)
    started = time.perf_counter()
    code = recworld(argv)
    if code != 0:
        sys.exit(code)
    print(f"   ({time.perf_counter() - started:.1f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("demo-out"))
    parser.add_argument("--limit", type=int, default=20, help="questions per measure for the LLM")
    parser.add_argument("--baseline-limit", type=int, default=200, help="questions per measure for baselines")
    args = parser.parse_args()
    suite = args.out / "suite"

    step("Fetch MovieLens-100K", ["data", "fetch", "ml-100k"])
    if not (suite / "manifest.json").exists():
        step("Build the LRWorld suite", ["build", "--dataset", "ml-100k", "--out", str(suite)])
    for spec in BASELINES:
        step(f"Evaluate {spec}", ["eval", str(suite), "--model", spec, "--limit", str(args.baseline_limit)])
    step(
        f"Evaluate {LLM} (rank mode)",
        ["eval", str(suite), "--model", LLM, "--mode", "rank", "--limit", str(args.limit)],
    )
    report_dir = args.out / "report"
    step("Write the report", ["report", str(suite), "--out", str(report_dir)])
    print(f"\nReport: {report_dir.resolve() / 'report.html'}")
    print(f"        {report_dir.resolve() / 'report.md'}")


if __name__ == "__main__":
    main()
