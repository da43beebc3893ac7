"""Model backends behind one protocol, named by spec strings such as ``llamacpp:smollm2-135m``.

Two kinds share the spec syntax, the registry and the runner's cache: chat
models (:class:`Model`, made by :func:`load_model`) and text embedders
(:class:`Embedder`, made by :func:`load_embedder`). Built-in backends are rows
of :data:`BACKENDS` and :data:`EMBEDDERS`; third-party packages add theirs
through the ``recworld.models`` entry-point group (``docs/models.md``).

The chat types (``Request``, ``Response``, ``Message``, ``EmbeddingRequest``)
live in :mod:`recworld.chat` and are re-exported here for convenience.
"""

from recworld.chat import AnswerMode, EmbeddingRequest, Message, Request, Response, Usage
from recworld.models.backend import Backend, ModelKind
from recworld.models.base import (
    BoundedModel,
    CountsTokens,
    FatalModelError,
    Model,
    ModelBase,
    TransientModelError,
    context_window,
    max_concurrency,
    token_counter,
)
from recworld.models.embedding import Embedder, EmbedderBase, normalise
from recworld.models.plugins import refresh as refresh_plugins
from recworld.models.registry import (
    BACKENDS,
    EMBEDDERS,
    EmbedderLike,
    ModelConfig,
    ModelLike,
    ModelSpec,
    backend_of,
    load_embedder,
    load_model,
    object_name,
    resolve_embedder,
    resolve_model,
)

__all__ = [
    "BACKENDS",
    "EMBEDDERS",
    "AnswerMode",
    "Backend",
    "BoundedModel",
    "CountsTokens",
    "Embedder",
    "EmbedderBase",
    "EmbedderLike",
    "EmbeddingRequest",
    "FatalModelError",
    "Message",
    "Model",
    "ModelBase",
    "ModelConfig",
    "ModelKind",
    "ModelLike",
    "ModelSpec",
    "Request",
    "Response",
    "TransientModelError",
    "Usage",
    "backend_of",
    "context_window",
    "load_embedder",
    "load_model",
    "max_concurrency",
    "normalise",
    "object_name",
    "refresh_plugins",
    "resolve_embedder",
    "resolve_model",
    "token_counter",
]
