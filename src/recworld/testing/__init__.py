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

:class:`FakeOpenAIServer` (:mod:`recworld.testing.fake_server`) is the fake OpenAI-compatible
server RecWorld's own tests run against: one server on 127.0.0.1 whose reply is a named mode
(:data:`MODES`), for a backend that talks to such a server.
"""

from recworld.testing._contract import PROMPT, SECRET, EmbedderContract, ModelContract
from recworld.testing.fake_server import MODES, FakeOpenAIServer

__all__ = ["MODES", "PROMPT", "SECRET", "EmbedderContract", "FakeOpenAIServer", "ModelContract"]
