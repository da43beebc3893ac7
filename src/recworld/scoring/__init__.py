"""Scoring: read choices out of model text, then scores, intervals and position bias.

``extract_choice`` turns a reply into an option index; ``score_samples`` turns
a run's typed sample records (:class:`SampleRecord`) into its
:class:`MetricsRecord` (``compute_metrics`` gives the same as JSON);
``paired_comparison`` compares two runs on the questions they share
(:class:`PairedRecord`). The report reads these records as they are.

Every name here loads its module on first use (module ``__getattr__``, the lazy-attribute
pattern of Scientific Python's SPEC 1), so a command module that imports one submodule
does not pay for the rest at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recworld.lazy import attach

if TYPE_CHECKING:
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

# Public names that load their module (and its heavy imports) when first asked for.
_ON_FIRST_USE = {
    "extract_choice": "recworld.scoring.extract",
    "strip_reasoning": "recworld.scoring.extract",
    "PAIRED_SCHEMA": "recworld.scoring.metrics",
    "compute_metrics": "recworld.scoring.metrics",
    "load_samples": "recworld.scoring.metrics",
    "score_samples": "recworld.scoring.metrics",
    "paired_comparison": "recworld.scoring.paired",
    "METRICS_SCHEMA": "recworld.scoring.records",
    "SAMPLE_SCHEMA": "recworld.scoring.records",
    "MetricsRecord": "recworld.scoring.records",
    "PairedRecord": "recworld.scoring.records",
    "SampleRecord": "recworld.scoring.records",
    "SampleUsage": "recworld.scoring.records",
    "CONFIDENCE": "recworld.stats",
    "N_RESAMPLES": "recworld.stats",
}


__getattr__, __dir__ = attach(__name__, _ON_FIRST_USE)


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
