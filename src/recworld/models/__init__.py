"""Model backends behind one protocol, named by spec strings such as ``llamacpp:smollm2-135m``."""

from recworld.models.base import (
    AnswerMode,
    Message,
    Model,
    Request,
    Response,
    TransientModelError,
    Usage,
)
from recworld.models.registry import BACKENDS, ModelConfig, ModelSpec, load_model

__all__ = [
    "BACKENDS",
    "AnswerMode",
    "Message",
    "Model",
    "ModelConfig",
    "ModelSpec",
    "Request",
    "Response",
    "TransientModelError",
    "Usage",
    "load_model",
]
