"""Benchmark: how long an LRWorld suite build takes, stage by stage.

    .venv/bin/python bench/bench_build.py                      # ML-100K, every measure, NeuMF included
    .venv/bin/python bench/bench_build.py --repeats 2          # + checks the two builds are byte-identical
    .venv/bin/python bench/bench_build.py --synthetic 0.1      # synthetic ML-25M shape at 10% scale
    .venv/bin/python bench/bench_build.py --synthetic 1.0      # ML-25M size: 162k users, 62k items, 25M rows

ML-100K is read with ``recworld.data.load_source`` from the RecBole atomic
files (``--ml100k``). The synthetic mode generates a MovieLens-25M-shaped log
(162k users, 62k items, 25M interactions; the generator of
``bench_mining_scale.py``: log-normal activity, power-law item popularity)
scaled by the given fraction, builds it in a subprocess, and reports wall time and peak RSS
(targets at full scale: under 5 minutes and 8 GB). Each build prints the
manifest's per-stage seconds; stages are exclusive (a measure's time excludes
the shared signals it triggered, which are listed under their own names).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ML100K = Path("/tmp/pdl/recbole/dataset_example/ml-100k")
ML25M_SHAPE = {"users": 162_541, "items": 62_423, "interactions": 25_000_095}


def build_once(dataset: Any, seed: int) -> tuple[float, dict[str, Any]]:
    from recworld.lrworld import BuildConfig, build_suite

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        manifest = build_suite(dataset, BuildConfig(seed=seed), Path(tmp) / "suite")
        return time.perf_counter() - start, manifest


def print_stages(manifest: dict[str, Any]) -> None:
    for stage, seconds in sorted(manifest["timings"].items(), key=lambda kv: -kv[1]):
        print(f"  {stage:<32} {seconds:8.2f} s")


def bench_ml100k(path: Path, repeats: int) -> None:
    from recworld.data import load_source

    start = time.perf_counter()
    dataset = load_source(path)
    print(f"ML-100K loaded in {time.perf_counter() - start:.2f} s: {dataset.summary()}")
    walls: list[float] = []
    hashes: list[dict[str, str]] = []
    for _ in range(repeats):
        wall, manifest = build_once(dataset, seed=0)
        walls.append(wall)
        hashes.append(manifest["questions_sha256"])
        print(f"build {len(walls)}: {wall:.2f} s, counts {manifest['counts']}")
        print_stages(manifest)
    print(f"ML-100K build: median {statistics.median(walls):.2f} s over {repeats} run(s)")
    if repeats > 1:
        print(f"byte-identical question files across runs: {all(h == hashes[0] for h in hashes)}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mb:.0f} MB")


def synthetic_dataset(scale: float, seed: int = 0) -> tuple[Any, float]:
    """ML-25M-shaped data from ``bench_mining_scale.synthetic`` (the miners' benchmark log), scaled.

    Users and interactions scale linearly, items with the square root (as in
    MovieLens subsets). Timestamps are drawn uniformly; the catalogue has
    title, year and two genres per movie, so the movie measures that need only
    those fields build. Returns the dataset and the seconds ``Dataset.from_frames`` took.
    """
    import numpy as np
    import pandas as pd

    from recworld.data import Dataset

    sys.path.insert(0, str(Path(__file__).parent))
    from bench_mining_scale import synthetic

    n_users = max(100, int(ML25M_SHAPE["users"] * scale))
    n_items = max(100, int(ML25M_SHAPE["items"] * scale**0.5))
    frame = synthetic(n_users, n_items, int(ML25M_SHAPE["interactions"] * scale), seed=seed)
    gen = np.random.default_rng(seed + 1)
    frame["timestamp"] = gen.integers(1_000_000_000, 1_600_000_000, len(frame))
    genres = ["Action", "Adventure", "Comedy", "Drama", "Horror", "Romance", "Sci-Fi", "Thriller", "War"]
    catalogue = pd.DataFrame(
        {
            "item_id": np.arange(n_items),
            "title": [f"Movie {i}" for i in range(n_items)],
            "year": 1950 + np.arange(n_items) % 70,
            "genres": [[genres[i % 9], genres[(i * 7) % 9]] for i in range(n_items)],
        }
    )
    start = time.perf_counter()
    dataset = Dataset.from_frames(f"synthetic-{scale:g}", "movie", frame, catalogue)
    return dataset, time.perf_counter() - start


def _synthetic_stage(scale: float) -> None:
    start = time.perf_counter()
    dataset, from_frames_s = synthetic_dataset(scale)
    generated = time.perf_counter() - start
    wall, manifest = build_once(dataset, seed=0)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "summary": dataset.summary(),
                "generate_s": generated,
                "from_frames_s": from_frames_s,
                "build_s": wall,
                "peak_rss_mb": peak_mb,
                "timings": manifest["timings"],
                "counts": manifest["counts"],
            }
        )
    )


def bench_synthetic(scale: float) -> None:
    done = subprocess.run(
        [sys.executable, __file__, "--_synthetic-stage", str(scale)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(done.stderr[-3000:])
        raise SystemExit(done.returncode)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"synthetic ML-25M shape x{scale:g}: {result['summary']}")
    print(
        f"generate {result['generate_s']:.1f} s (of which Dataset.from_frames "
        f"{result['from_frames_s']:.1f} s), build {result['build_s']:.1f} s, "
        f"peak RSS {result['peak_rss_mb']:.0f} MB (whole process, generation included)"
    )
    print_stages({"timings": result["timings"]})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ml100k", type=Path, default=ML100K, help="folder of the RecBole ml-100k files")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--synthetic", type=float, default=None, help="also build a synthetic ML-25M shape at this scale"
    )
    parser.add_argument("--_synthetic-stage", dest="stage", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage is not None:
        _synthetic_stage(args.stage)
        return
    if args.ml100k.exists():
        bench_ml100k(args.ml100k, args.repeats)
    else:
        print(f"skipping ML-100K: {args.ml100k} not found")
    if args.synthetic is not None:
        bench_synthetic(args.synthetic)


if __name__ == "__main__":
    main()
