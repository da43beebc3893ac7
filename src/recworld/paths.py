"""Where RecWorld keeps fetched datasets and caches."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """Root of RecWorld's files: ``$RECWORLD_HOME`` or ``~/.cache/recworld``."""
    env = os.environ.get("RECWORLD_HOME")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "recworld"


def datasets_dir() -> Path:
    """Where ``recworld data fetch`` puts datasets, one folder each."""
    return home() / "datasets"


def models_dir() -> Path:
    """Where assembled model files (such as the Gemma GGUF) are kept."""
    return home() / "models"
