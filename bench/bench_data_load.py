"""Loading speed on an ML-25M-shaped file: fast path vs a line-by-line reader, parse vs cache.

Writes a synthetic ``ratings.csv`` / ``movies.csv`` folder with ROWS ratings
(default 2,000,000; ML-25M has 25,000,095), then prints medians of:
- ``read_table`` (pandas C parser) against a plain ``csv`` module loop on the same file,
- ``load_source`` parsing the folder, and again reading the Parquet cache,
- the cost of locating a bad line in the last row (the slow scan).

Usage: ``python bench/bench_data_load.py [ROWS] [REPEATS]``.
"""

from __future__ import annotations

import csv
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from recworld.data import load_source
from recworld.data._tables import read_table
from recworld.data.movielens import _ratings_spec
from recworld.errors import DataError


def write_folder(root: Path, rows: int) -> None:
    rng = np.random.default_rng(0)
    users = rng.integers(1, max(rows // 150, 2), rows)
    items = rng.integers(1, 60_000, rows)
    ratings = rng.integers(1, 11, rows) / 2
    stamps = rng.integers(800_000_000, 1_600_000_000, rows)
    root.mkdir(parents=True, exist_ok=True)
    with (root / "ratings.csv").open("w") as handle:
        handle.write("userId,movieId,rating,timestamp\n")
        for start in range(0, rows, 500_000):
            end = min(start + 500_000, rows)
            block = np.column_stack([users[start:end], items[start:end], stamps[start:end]])
            handle.writelines(
                f"{u},{i},{r},{t}\n"
                for (u, i, t), r in zip(block.tolist(), ratings[start:end].tolist(), strict=True)
            )
    with (root / "movies.csv").open("w") as handle:
        handle.write("movieId,title,genres\n")
        handle.writelines(f'{i},"Movie {i}, The ({1900 + i % 120})",Drama|Comedy\n' for i in range(1, 60_000))


def csv_loop(path: Path) -> int:
    count = 0
    with path.open(newline="") as handle:
        reader = csv.reader(handle)
        next(reader)
        for row in reader:
            int(row[0]), int(row[1]), float(row[2]), int(row[3])
            count += 1
    return count


def median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RECWORLD_HOME"] = str(Path(tmp) / "home")
        root = Path(tmp) / "ml-25m"
        write_folder(root, rows)
        spec = _ratings_spec(root / "ratings.csv", ",", "utf-8", header=True)
        fast = median_time(lambda: read_table(spec), repeats)
        slow = median_time(lambda: csv_loop(root / "ratings.csv"), repeats)
        print(f"rows={rows:,} repeats={repeats}")
        print(f"read_table (pandas C)   {fast:7.2f} s   {rows / fast / 1e6:5.2f} M rows/s")
        print(f"csv module loop         {slow:7.2f} s   ratio {slow / fast:4.1f}x slower")

        start = time.perf_counter()
        load_source(root)
        parse = time.perf_counter() - start
        cached = median_time(lambda: load_source(root), repeats)
        print(f"load_source, parse      {parse:7.2f} s")
        print(f"load_source, cache hit  {cached:7.2f} s   ratio {parse / cached:4.1f}x faster")

        with (root / "ratings.csv").open("a") as handle:
            handle.write("1,2,3.5,not-a-time\n")
        start = time.perf_counter()
        try:
            load_source(root)
        except DataError as exc:
            where = str(exc).split(": ", 1)[0]
            print(f"bad last line found in  {time.perf_counter() - start:7.2f} s   ({where})")


if __name__ == "__main__":
    main()
