"""Baselines that answer LRWorld questions: ``random``, ``popularity``, ``itemknn`` and ``oracle``.

They sit above :mod:`recworld.lrworld`: they read the structured question and the
suite's own dataset, never the prompt. The model registry names this package by
module path (``recworld.models.registry.BACKENDS``), the way a plugin is named by
an entry point, so :mod:`recworld.models` never imports it.
"""

from recworld.baselines import classic
from recworld.baselines.classic import (
    Baseline,
    ItemKNNBaseline,
    PopularityBaseline,
    RandomBaseline,
)
from recworld.baselines.oracle import OracleBaseline
from recworld.errors import ConfigError
from recworld.models.registry import ModelConfig, ModelSpec


def create(spec: ModelSpec, config: ModelConfig) -> Baseline:
    """The baseline a spec names (they take no model name): the registry's factory for this package."""
    if spec.backend != OracleBaseline.name:
        return classic.create(spec, config)
    if spec.name:
        raise ConfigError(f"the {spec.backend} baseline takes no name, got {str(spec)!r}")
    return OracleBaseline(config)


__all__ = [
    "Baseline",
    "ItemKNNBaseline",
    "OracleBaseline",
    "PopularityBaseline",
    "RandomBaseline",
    "create",
]
