# What mypy sees of ``recworld`` (src/recworld/__init__.py is what runs). The names in its LAZY table
# are imported on first use, so without this stub they would be ``Any`` to a type checker and
# ``recworld.evaluate(suite, model=m, limit="3")`` would pass. tests/test_layers.py checks that this
# stub declares exactly the runtime's ``__all__`` and imports upward only what LAZY names.

from recworld.errors import ConfigError as ConfigError
from recworld.errors import DataError as DataError
from recworld.errors import ModelError as ModelError
from recworld.errors import RecWorldError as RecWorldError
from recworld.evaluation.api import evaluate as evaluate
from recworld.evaluation.api import evaluate_async as evaluate_async

__version__: str
LAZY: dict[str, str]
__all__ = [
    "ConfigError",
    "DataError",
    "ModelError",
    "RecWorldError",
    "__version__",
    "evaluate",
    "evaluate_async",
]

def __dir__() -> list[str]: ...
