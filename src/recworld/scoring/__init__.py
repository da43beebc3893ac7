"""Scoring: read choices out of model text, then scores, intervals and position bias.

``extract_choice`` turns a reply into an option index; ``score_samples`` turns
a run's typed sample records (:class:`SampleRecord`) into its
:class:`MetricsRecord` (``compute_metrics`` gives the same as JSON);
``paired_comparison`` compares two runs on the questions they share
(:class:`PairedRecord`). The report reads these records as they are.
"""

from recworld.scoring.extract import extract_choice, strip_reasoning
from recworld.scoring.metrics import PAIRED_SCHEMA, compute_metrics, load_samples, score_samples
from recworld.scoring.paired import paired_comparison
from recworld.scoring.records import (
    METRICS_SCHEMA,
    SAMPLE_SCHEMA,
    MetricsRecord,
    PairedRecord,
    SampleRecord,
    SampleUsage,
)
from recworld.stats import CONFIDENCE, N_RESAMPLES

__all__ = [
    "CONFIDENCE",
    "METRICS_SCHEMA",
    "N_RESAMPLES",
    "PAIRED_SCHEMA",
    "SAMPLE_SCHEMA",
    "MetricsRecord",
    "PairedRecord",
    "SampleRecord",
    "SampleUsage",
    "compute_metrics",
    "extract_choice",
    "load_samples",
    "paired_comparison",
    "score_samples",
    "strip_reasoning",
]
