"""The numbers below which a score, a difference or a position pattern is not read as a result.

They are declared once here and named wherever they apply (tables, captions,
the eval table), so a reader always sees the rule that was used.
"""

from __future__ import annotations

__all__ = ["DEGENERATE_P", "DEGENERATE_TV", "MIN_INTERVAL_N", "MIN_PAIRED_N", "SIGNIFICANCE"]

# Below this many questions a cell shows its score and n, not an interval, and is never bold: the exact
# interval is honest but so wide (0/9 gives [0, 0.34]) that it compares with nothing.
MIN_INTERVAL_N = 10
# A paired difference is tested only on at least this many shared questions (per measure; for the
# macro difference, on every measure): fewer cannot make a one-question fluke look significant.
MIN_PAIRED_N = 20
# Two-sided level of the paired tests (exact McNemar per measure, sign flips for the macro difference).
SIGNIFICANCE = 0.05
# Degenerate answering: the parsed positions are further than this in total variation from the answer
# key's positions AND the most chosen position is chosen significantly more often than the key puts
# answers there (one-sided exact binomial test at DEGENERATE_P). "Always A" is 0.75 on 4 options, 0.9
# on 10; a model that follows the key is near 0.
DEGENERATE_TV = 0.5
DEGENERATE_P = 0.01
