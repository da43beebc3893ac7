"""Model backends behind one protocol, named by spec strings such as ``llamacpp:smollm2-135m``.

The chat types (``Request``, ``Response``, ``Message``) live in :mod:`recworld.chat`
and are re-exported here for convenience.
"""

from recworld.chat import AnswerMode, Message, Request, Response, Usage
from recworld.models.base import BoundedModel, Model, TransientModelError
from recworld.models.registry import BACKENDS, ModelConfig, ModelLike, ModelSpec, load_model, resolve_model

__all__ = [
    "BACKENDS",
    "AnswerMode",
    "BoundedModel",
    "Message",
    "Model",
    "ModelConfig",
    "ModelLike",
    "ModelSpec",
    "Request",
    "Response",
    "TransientModelError",
    "Usage",
    "load_model",
    "resolve_model",
]
