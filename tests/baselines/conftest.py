"""The baselines share the toy dataset and question builder of the model tests (tests/models/model_helpers).

pytest puts a test folder on ``sys.path`` only when it collects a module there,
and this folder is collected before tests/models, so it is added here.
"""

import sys
from pathlib import Path

_MODEL_TESTS = str(Path(__file__).resolve().parents[1] / "models")
if _MODEL_TESTS not in sys.path:
    sys.path.insert(0, _MODEL_TESTS)
