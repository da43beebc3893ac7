"""Benchmark: how long an LRWorld suite build takes, stage by stage.

    .venv/bin/python bench/bench_build.py                      # ML-100K, every measure, NeuMF included
    .venv/bin/python bench/bench_build.py --repeats 2          # + checks the two builds are byte-identical
    .venv/bin/python bench/bench_build.py --synthetic 0.1      # synthetic ML-25M shape at 10% scale
    .venv/bin/python bench/bench_build.py --synthetic 1.0      # ML-25M size: 162k users, 62k items, 25M rows
    .venv/bin/python bench/bench_build.py --synthetic 1.0 --netflix --no-ml100k --timeout 1200
                                                               # Netflix size: 480k users, 17.8k items, 100M

ML-100K is read with ``recworld.data.load_source`` from the RecBole atomic
files (``--ml100k``). The synthetic mode generates a MovieLens-25M-shaped log
(162k users, 62k items, 25M interactions), or a Netflix-shaped one with
``--netflix`` (480k users, 17.8k items, 100M interactions), scaled by the given
fraction, builds it in a subprocess, and reports wall time and peak RSS
(targets at full scale: ML-25M under 5 minutes and 8 GB; Netflix 15 minutes
and 16 GB on 2 cores). The log has log-normal user activity, power-law item
popularity and planted taste groups (``structured``), so NeuMF has something
to learn beyond popularity and its early stopping and weak-NeuMF guard behave
as on real data. Each build prints the manifest's per-stage seconds; stages are
exclusive (a measure's time excludes the shared signals it triggered, which
are listed under their own names). While the subprocess runs, every stage start
and end and every NeuMF epoch is logged with the elapsed time and peak RSS, so
a run stopped by ``--timeout`` still gives per-stage timings.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _fetched_ml100k() -> Path:
    """The RecBole atomic files that `recworld data fetch ml-100k` keeps (fetched on first use)."""
    from recworld.data.fetch import fetch

    return Path(fetch("ml-100k").path) / "raw"


ML25M_SHAPE = {"users": 162_541, "items": 62_423, "interactions": 25_000_095}
NETFLIX_SHAPE = {"users": 480_189, "items": 17_770, "interactions": 100_480_507}


def build_once(dataset: Any, seed: int, *, allow_weak_neumf: bool = False) -> tuple[float, dict[str, Any]]:
    from recworld.lrworld import BuildConfig, build_suite

    config = BuildConfig(seed=seed, allow_weak_neumf=allow_weak_neumf)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        manifest = build_suite(dataset, config, Path(tmp) / "suite")
        return time.perf_counter() - start, manifest.to_json()  # printed as JSON below


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
        print_neumf(manifest.get("neumf"))
    print(f"ML-100K build: median {statistics.median(walls):.2f} s over {repeats} run(s)")
    if repeats > 1:
        print(f"byte-identical question files across runs: {all(h == hashes[0] for h in hashes)}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mb:.0f} MB")


def structured(n_users: int, n_items: int, n_interactions: int, seed: int = 0, groups: int = 20) -> Any:
    """A log with ``bench_mining_scale.synthetic``'s activity and popularity plus planted taste groups.

    Every user belongs to one of ``groups`` groups; 60 % of its draws come from
    its group's items (popularity-ranked within the group), the rest from the
    whole catalogue. Pure-popularity data would leave NeuMF nothing to find.
    """
    import numpy as np
    import pandas as pd

    gen = np.random.default_rng(seed)
    activity = gen.lognormal(mean=0.0, sigma=1.0, size=n_users)
    degree = np.maximum(20, np.round(activity / activity.sum() * n_interactions)).astype(np.int64)
    degree = np.minimum(degree, n_items // 2)
    users = np.repeat(np.arange(n_users, dtype=np.int32), degree)
    popularity = 1.0 / (np.arange(n_items) + 10.0) ** 1.1
    items = gen.choice(n_items, size=len(users), p=popularity / popularity.sum())
    in_group = np.flatnonzero(gen.random(len(users), dtype=np.float32) < 0.6)
    per_group = n_items // groups
    ranked = 1.0 / (np.arange(per_group) + 10.0) ** 1.1
    rank = gen.choice(per_group, size=len(in_group), p=ranked / ranked.sum())
    items[in_group] = rank * groups + gen.integers(0, groups, n_users)[users[in_group]]
    return pd.DataFrame({"user_id": users, "item_id": gen.permutation(n_items).astype(np.int32)[items]})


def synthetic_dataset(scale: float, shape: dict[str, int], seed: int = 0) -> tuple[Any, float]:
    """A synthetic log of ``shape`` scaled by ``scale``, as a movie dataset.

    Users and interactions scale linearly, items with the square root (as in
    MovieLens subsets). Timestamps are drawn uniformly; the catalogue has
    title, year and two genres per movie, so the movie measures that need only
    those fields build. Returns the dataset and the seconds ``Dataset.from_frames`` took.
    """
    import numpy as np
    import pandas as pd

    from recworld.data import Dataset

    n_users = max(100, int(shape["users"] * scale))
    n_items = max(100, int(shape["items"] * scale**0.5))
    frame = structured(n_users, n_items, int(shape["interactions"] * scale), seed=seed)
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


def _log_stages(t0: float) -> None:
    """Log every build stage's start and end (elapsed seconds, peak RSS) to stderr as it happens."""
    from contextlib import contextmanager

    from recworld.lrworld.context import BuildContext

    original = BuildContext.stage

    def peak_mb() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    @contextmanager
    def logged(self: BuildContext, name: str) -> Any:
        start = time.perf_counter()
        print(
            f"[{start - t0:7.1f} s] start {name} (peak RSS {peak_mb():.0f} MB)", file=sys.stderr, flush=True
        )
        with original(self, name):
            yield
        took = time.perf_counter() - start
        print(
            f"[{time.perf_counter() - t0:7.1f} s] done  {name} in {took:.1f} s", file=sys.stderr, flush=True
        )

    BuildContext.stage = logged  # type: ignore[method-assign,unused-ignore]
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="[%(relativeCreated)9.0f ms] neumf %(message)s"
    )
    logging.getLogger("recworld.mining.neumf").setLevel(logging.INFO)


def _synthetic_stage(scale: float, shape_name: str) -> None:
    t0 = time.perf_counter()
    _log_stages(t0)
    shape = NETFLIX_SHAPE if shape_name == "netflix" else ML25M_SHAPE
    dataset, from_frames_s = synthetic_dataset(scale, shape)
    generated = time.perf_counter() - t0
    print(f"[{generated:7.1f} s] generated {dataset.summary()}", file=sys.stderr, flush=True)
    wall, manifest = build_once(dataset, seed=0, allow_weak_neumf=True)
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
                "neumf": manifest.get("neumf"),
            }
        )
    )


def bench_neumf_only(scale: float, shape_name: str) -> None:
    """NeuMF alone, with the build's defaults, on the synthetic log's matrix (no Dataset, no other stage).

    The full build holds the log as string ids (about 140 bytes a row); this
    measures NeuMF's own time and memory at sizes where that would not fit.
    """
    from recworld.mining import InteractionMatrix, NeuMFConfig, train_neumf

    t0 = time.perf_counter()
    _log_stages(t0)
    shape = NETFLIX_SHAPE if shape_name == "netflix" else ML25M_SHAPE
    n_users, n_items = int(shape["users"] * scale), int(shape["items"] * scale**0.5)
    frame = structured(n_users, n_items, int(shape["interactions"] * scale))
    m = InteractionMatrix.from_interactions(frame)
    del frame
    ready = time.perf_counter()
    print(f"matrix {m.matrix.shape}, {m.matrix.nnz} pairs in {ready - t0:.1f} s", flush=True)
    result = train_neumf(m, NeuMFConfig(), seed=0)
    info = result.info
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"NeuMF {shape_name} x{scale:g}: {time.perf_counter() - ready:.1f} s, {info['epochs_run']} epochs "
        f"(best {info['best_epoch']}), {info['examples_seen']} examples; test HR@10 cosine space "
        f"{info['hr@10_embedding']:.3f} (gap SE {info['hr@10_embedding_gap_se']:.4f}), popularity "
        f"{info['hr@10_popularity']:.3f}, fused model {info['hr@10']:.3f}; "
        f"peak RSS {peak_mb:.0f} MB (generation included)"
    )


def bench_synthetic(scale: float, shape_name: str, timeout: float | None) -> None:
    command = [sys.executable, __file__, "--_synthetic-stage", str(scale), "--_shape", shape_name]
    try:
        # stderr streams through: the stage log survives a timeout.
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"stopped after {timeout:.0f} s (--timeout): the stage log above has the partial timings")
        raise SystemExit(124) from None
    if done.returncode != 0:
        raise SystemExit(done.returncode)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"synthetic {shape_name} shape x{scale:g}: {result['summary']}")
    print(
        f"generate {result['generate_s']:.1f} s (of which Dataset.from_frames "
        f"{result['from_frames_s']:.1f} s), build {result['build_s']:.1f} s, "
        f"peak RSS {result['peak_rss_mb']:.0f} MB (whole process, generation included)"
    )
    print_stages({"timings": result["timings"]})
    print_neumf(result["neumf"])


def print_neumf(record: dict[str, Any] | None) -> None:
    if not record:
        print("NeuMF: not trained")
        return
    space, popularity, se = (
        record["hr_at_10_embedding"],
        record["hr_at_10_popularity"],
        record.get("embedding_gap_se"),
    )
    gap = (
        f", gap {(space - popularity) / se:.1f} SE"
        if space is not None and popularity is not None and se
        else ""
    )
    print(
        f"NeuMF: test HR@10 cosine space ({record.get('space')}) {space}, popularity {popularity}{gap}, "
        f"fused model {record['hr_at_10']}; verdict {record['verdict']}; "
        f"best epoch {record['best_epoch']} of {len(record['curve'])}"
    )
    for row in record["curve"]:
        print(
            f"  epoch {row['epoch']:>2}: loss {row['loss']:.4f}, "
            f"valid HR@10 space {row['hr_at_10_embedding']}, model {row['hr_at_10']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--ml100k", type=Path, default=None, help="folder of the RecBole ml-100k files (default: fetched)"
    )
    parser.add_argument("--no-ml100k", action="store_true", help="skip the ML-100K build")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--synthetic", type=float, default=None, help="also build a synthetic log of this scale (1.0 = full)"
    )
    parser.add_argument(
        "--netflix",
        action="store_true",
        help="synthetic Netflix shape (480k x 17.8k, 100M) instead of ML-25M",
    )
    parser.add_argument(
        "--neumf-only", action="store_true", help="with --synthetic: train NeuMF alone on the log's matrix"
    )
    parser.add_argument("--timeout", type=float, default=None, help="stop the synthetic build after SECONDS")
    parser.add_argument("--_synthetic-stage", dest="stage", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--_shape", dest="shape", default="ml25m", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage is not None:
        _synthetic_stage(args.stage, args.shape)
        return
    if args.neumf_only and args.synthetic is not None:
        bench_neumf_only(args.synthetic, "netflix" if args.netflix else "ml25m")
        return
    if not args.no_ml100k:
        ml100k = args.ml100k or _fetched_ml100k()
        if ml100k.exists():
            bench_ml100k(ml100k, args.repeats)
        else:
            print(f"skipping ML-100K: {ml100k} not found")
    if args.synthetic is not None:
        bench_synthetic(args.synthetic, "netflix" if args.netflix else "ml25m", args.timeout)


if __name__ == "__main__":
    main()
