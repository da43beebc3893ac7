"""RecWorld: measure how well large language models understand users.

Two suites share one engine:

* LRWorld (:mod:`recworld.lrworld`) builds recommendation-knowledge questions
  from real interaction logs and scores any model on them.
* LUNAR (:mod:`recworld.lunar`) synthesises anchored behaviour logs and judges
  how well an assistant personalises its answers from them.
"""

from recworld.errors import ConfigError, DataError, ModelError, RecWorldError

__version__ = "0.1.0"

__all__ = ["ConfigError", "DataError", "ModelError", "RecWorldError", "__version__"]
