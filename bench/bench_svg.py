"""A report chart saved as SVG: savefig's tight crop (two layouts) against :func:`recworld.svg.to_svg` (one).

    python bench/bench_svg.py [--repeats 15]

Prints, side by side in one run, the median seconds of one save of each chart
the old way and the new way (taking turns), and their ratio. The charts are the report's own,
drawn by their own functions (the kit's grouped bars as LRWorld's score chart
draws them, LRWorld's heatmaps), each drawn anew for every save, so no
save finds the text layout of an earlier one cached; only the save is timed.

The old save is ``savefig(..., bbox_inches="tight")`` alone, without the id
prefixing that ``to_svg`` does on top, so the ratio leans against the new one.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable
from typing import Any

import recworld.report.figures as lrworld_figures
import recworld.reportkit.figures as kit
from recworld.reportkit.figures import Bar, bars
from recworld.svg import to_svg

CATEGORIES = [f"measure {i}: {'long ' * (i % 3)}name" for i in range(10)]
MODELS = ["openai:gpt-4o-mini", "llamacpp:smollm2-135m (temperature 0.7; seed 3)", "popularity", "RANDOM"]


def old_save(fig: Any, key: str) -> str:
    """The save ``to_svg`` replaced: matplotlib lays the figure out once to measure it, then draws it."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    return buf.getvalue()


def bar_chart() -> None:
    series = {m: [Bar(0.3 + 0.05 * j, 0.2, 0.5 + 0.05 * j) for _ in CATEGORIES] for j, m in enumerate(MODELS)}
    chance = [0.25] * len(CATEGORIES)
    title, ylabel = "Score per measure (ml-100k)", "accuracy / HitRatio@1"
    bars(
        "b", title, CATEGORIES, series, ylabel=ylabel, ylim=(0, 1), reference=chance, reference_label="chance"
    )


def heatmap() -> None:
    rows = [f"user group {i}" for i in range(12)]
    grid = [[((r * 7 + c * 3) % 10) / 10 for c in range(8)] for r in range(12)]
    panel = (rows, list("ABCDEFGH"), grid)
    lrworld_figures.heatmaps("h", "Share per group", {"a": panel, "b": panel})


CHARTS: dict[str, tuple[Callable[[], None], list[Any]]] = {
    "kit bars (LRWorld score chart)": (bar_chart, [kit]),
    "heatmaps (two panels)": (heatmap, [lrworld_figures]),
}


def timed(draw: Callable[[], None], modules: list[Any], repeats: int) -> tuple[float, float]:
    """The median seconds of the old save and of ``to_svg`` over ``repeats`` drawings of one chart each.

    The two take turns (old, new, new, old, ...), so a change in the machine's load falls on both.
    """
    seconds: dict[str, list[float]] = {"old": [], "new": []}
    turn = ["old"]

    def timing(fig: Any, key: str) -> str:
        save = old_save if turn[0] == "old" else to_svg
        started = time.perf_counter()
        text = save(fig, key)
        seconds[turn[0]].append(time.perf_counter() - started)
        return text

    originals = [m.to_svg for m in modules]
    for m in modules:
        m.to_svg = timing
    try:
        draw()  # the first drawing pays for font loading: not counted
        seconds["old"].clear()
        for i in range(repeats):
            for turn[0] in ("old", "new") if i % 2 == 0 else ("new", "old"):
                draw()
    finally:
        for m, original in zip(modules, originals, strict=True):
            m.to_svg = original
    return statistics.median(seconds["old"]), statistics.median(seconds["new"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"median seconds of one SVG save over {args.repeats} drawings of each chart")
    print(f"{'chart':<34} {'tight savefig':>14} {'to_svg':>10} {'new/old':>8}")
    for name, (draw, modules) in CHARTS.items():
        old, new = timed(draw, modules, args.repeats)
        print(f"{name:<34} {old:>14.4f} {new:>10.4f} {new / old:>8.2f}")


if __name__ == "__main__":
    main()
