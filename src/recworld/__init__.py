"""RecWorld: measure how well large language models understand users.

Two suites share one engine:

* LRWorld (:mod:`recworld.lrworld`) builds recommendation-knowledge questions
  from real interaction logs and scores any model on them;
  ``recworld.evaluate(suite, model=...)`` runs one from Python.
* LUNAR (:mod:`recworld.lunar`) synthesises anchored behaviour logs and judges
  how well an assistant personalises its answers from them.

``import recworld`` stays light: ``evaluate`` is looked up by module name the
first time it is used (:data:`LAZY`), so the evaluation stack loads only then.
"""

from recworld.errors import ConfigError, DataError, ModelError, RecWorldError
from recworld.lazy import attach

__version__ = "0.1.0"

# Public names that live in an upper package, loaded on first use (the layer test lists each edge).
LAZY = {"evaluate": "recworld.evaluation.api", "evaluate_async": "recworld.evaluation.api"}

__all__ = [
    "ConfigError",
    "DataError",
    "ModelError",
    "RecWorldError",
    "__version__",
    "evaluate",
    "evaluate_async",
]


__getattr__, __dir__ = attach(__name__, LAZY)
