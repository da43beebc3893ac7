"""Load an Amazon-sized 5-core category and report time and peak memory.

Writes a synthetic category in the published 2018 format (``X_5.json.gz`` reviews with
review text and styles, ``meta_X.json.gz`` with a catalogue larger than the reviewed set,
duplicate and dict-literal lines) to a temporary folder, then times
``recworld.data.amazon.load_amazon`` and, when the builder exists, ``build_suite`` on it.

    .venv/bin/python bench/bench_amazon_scale.py --reviews 1000000

Peak RSS is measured in a fresh child process per stage so stages do not mask each other.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recworld.seeding import rng

WORDS = "great good fits well color small large quality price works cable case phone".split()  # noqa: SIM905
COLORS = ["Black", "White", "Blue", "Red", "Navy Blue", "Grey"]


def write_category(folder: Path, n_reviews: int, seed: int = 0) -> None:
    """A 5-core-shaped category: every user and item has at least 5 reviews."""
    gen = rng(seed, "bench", "amazon")
    n_users = max(5, n_reviews // 9)
    n_items = max(5, n_reviews // 15)
    users = gen.integers(0, n_users, n_reviews)
    items = (gen.zipf(1.3, n_reviews) - 1) % n_items
    times = 1_300_000_000 + gen.integers(0, 200_000_000, n_reviews)
    ratings = gen.integers(1, 6, n_reviews)
    styled = gen.random(n_reviews) < 0.4
    color_pick = gen.integers(0, len(COLORS), n_reviews)
    text = " ".join(WORDS * 4)
    with gzip.open(folder / "Bench_5.json.gz", "wt", encoding="utf-8", compresslevel=1) as out:
        for k in range(n_reviews):
            record: dict[str, object] = {
                "overall": float(ratings[k]),
                "verified": True,
                "reviewTime": "01 1, 2015",
                "reviewerID": f"A{users[k]:013d}",
                "asin": f"B{items[k]:09d}",
                "reviewerName": "Someone",
                "reviewText": text,
                "summary": "Five Stars",
                "unixReviewTime": int(times[k]),
            }
            if styled[k]:
                record["style"] = {"Color:": f" {COLORS[color_pick[k]]}", "Size:": " Large"}
            out.write(json.dumps(record) + "\n")
    with gzip.open(folder / "meta_Bench.json.gz", "wt", encoding="utf-8", compresslevel=1) as out:
        for j in range(n_items * 3):  # the catalogue is larger than the reviewed set
            record = {
                "category": ["Bench", "Sub &amp; Things", f"Leaf {j % 50}"],
                "description": ["<b>Nice</b> product " + text],
                "title": f"Product {j} &amp; more",
                "brand": "Unknown" if j % 17 == 0 else f"Brand {j % 300}",
                "also_buy": [f"B{(j + 1):09d}"],
                "imageURLHighRes": [f"https://example.com/{j}.jpg"],
                "asin": f"B{j:09d}",
            }
            line = repr(record) if j % 101 == 0 else json.dumps(record)
            out.write(line + "\n")
            if j % 97 == 0:
                out.write(json.dumps(record) + "\n")  # duplicate ASIN line


def _stage_load(folder: str) -> None:
    from recworld.data.amazon import load_amazon

    start, cpu = time.perf_counter(), _cpu_seconds()
    ds = load_amazon(Path(folder))
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"seconds": elapsed, "cpu_seconds": _cpu_seconds() - cpu, "peak_rss_mb": peak_mb}
    print(json.dumps({**result, "summary": ds.summary()}))


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _stage_build(folder: str, per_measure: int) -> None:
    from recworld.data.amazon import load_amazon
    from recworld.lrworld import BuildConfig, build_suite

    ds = load_amazon(Path(folder))
    start, cpu = time.perf_counter(), _cpu_seconds()
    with tempfile.TemporaryDirectory() as out:
        manifest = build_suite(ds, BuildConfig(per_measure=per_measure), Path(out) / "suite").to_json()
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"seconds": elapsed, "cpu_seconds": _cpu_seconds() - cpu, "peak_rss_mb": peak_mb}
    print(json.dumps({**result, "counts": manifest.get("counts"), "timings": manifest.get("timings")}))


def _run_stage(
    stage: str, folder: Path, per_measure: int = 100, timeout_s: float | None = None
) -> dict[str, object]:
    command = [sys.executable, __file__, "--stage", stage, "--folder", str(folder)]
    try:
        done = subprocess.run(
            [*command, "--per-measure", str(per_measure)],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout_s:.0f} s"}
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--build", action="store_true", help="also time build_suite if it exists")
    parser.add_argument("--per-measure", type=int, default=100, help="questions per measure in the build")
    parser.add_argument(
        "--build-timeout", type=float, default=1800.0, help="seconds before the build is abandoned"
    )
    parser.add_argument("--stage", choices=["load", "build"])
    parser.add_argument("--folder")
    args = parser.parse_args()
    if args.stage == "load":
        _stage_load(args.folder)
        return
    if args.stage == "build":
        _stage_build(args.folder, args.per_measure)
        return

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        write_category(folder, args.reviews)
        sizes = {p.name: round(p.stat().st_size / 2**20, 1) for p in folder.iterdir()}
        print(f"generated {args.reviews} reviews in {time.perf_counter() - start:.1f}s; MiB: {sizes}")
        loads = [_run_stage("load", folder) for _ in range(args.repeats)]
        seconds = [float(r["seconds"]) for r in loads if "seconds" in r]  # type: ignore[arg-type]
        cpu = [float(r["cpu_seconds"]) for r in loads if "cpu_seconds" in r]  # type: ignore[arg-type]
        if not seconds:
            print("load failed:", loads)
            return
        print("load summary:", loads[0]["summary"])
        print(
            f"load: median {statistics.median(seconds):.1f}s wall, {statistics.median(cpu):.1f}s CPU "
            f"over {len(seconds)}, "
            f"{args.reviews / statistics.median(seconds):,.0f} reviews/s, "
            f"peak RSS {max(float(r['peak_rss_mb']) for r in loads):.0f} MiB"  # type: ignore[arg-type]
        )
        if args.build:
            build = _run_stage("build", folder, args.per_measure, args.build_timeout)
            print("build_suite:", build)


if __name__ == "__main__":
    main()
