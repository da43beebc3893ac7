"""The backend contract tests, shipped so a backend author runs the same checks ours pass.

Subclass :class:`ModelContract` (chat models) or :class:`EmbedderContract`
(embedders) in your own test module and give the class a ``model`` (or
``embedder``) pytest fixture; pytest collects the inherited ``test_*`` methods::

    import pytest
    from recworld.testing import ModelContract

    class TestMyModel(ModelContract):
        @pytest.fixture
        def model(self):
            return MyModel()

Importing this package needs neither pytest plugins nor heavy libraries:
pytest is imported only inside the tests (as ``lenskit.testing`` ships its
component tests). RecWorld's own backends are checked by these same classes
(``tests/models/test_model_contract.py``).
"""

from recworld.testing._contract import PROMPT, SECRET, EmbedderContract, ModelContract

__all__ = ["PROMPT", "SECRET", "EmbedderContract", "ModelContract"]
