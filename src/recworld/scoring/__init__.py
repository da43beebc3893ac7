"""Scoring: read choices out of model text, then scores, intervals and position bias.

``extract_choice`` turns a reply into an option index; ``compute_metrics``
turns a run's ``samples.jsonl`` records into ``metrics.json``;
``paired_comparison`` compares two runs on the questions they share.
"""

from recworld.scoring.bootstrap import CONFIDENCE, N_RESAMPLES, bootstrap_ci, bootstrap_means, percentile_ci
from recworld.scoring.extract import extract_choice
from recworld.scoring.metrics import (
    METRICS_SCHEMA,
    PAIRED_SCHEMA,
    compute_metrics,
    load_samples,
    paired_comparison,
)

__all__ = [
    "CONFIDENCE",
    "METRICS_SCHEMA",
    "N_RESAMPLES",
    "PAIRED_SCHEMA",
    "bootstrap_ci",
    "bootstrap_means",
    "compute_metrics",
    "extract_choice",
    "load_samples",
    "paired_comparison",
    "percentile_ci",
]
