"""What hf and hf-vision share: placement, the offline-aware load, and the identity of the weights.

Both load a processor (a tokenizer, or a multimodal processor) and a model from
a hub name or a local directory, place it with the typed ``device``/``dtype``
options, and name it in the cache by its name (a local directory by its
folder name plus a content hash, never its path) and dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recworld.errors import ModelError
from recworld.models._common import torch_placement
from recworld.models._hub import load_kwargs
from recworld.models._tokens import local_fingerprint
from recworld.models.options import TorchOptions

# (dtype, extra from_pretrained arguments) -> (processor or tokenizer, model)
Loader = Callable[[Any, dict[str, Any]], tuple[Any, Any]]


@dataclass(frozen=True)
class TorchLoaded:
    torch: Any
    device: str
    processor: Any
    model: Any
    identity: dict[str, str]


def load_torch_model(backend: str, name: str, options: TorchOptions, load: Loader) -> TorchLoaded:
    """Load with ``load`` (offline when the hub is out of reach), place it, and name it."""
    import torch

    device, dtype = torch_placement(options)
    hub = load_kwargs(name, backend)
    try:
        processor, model = load(dtype, hub)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"{backend}:{name}: cannot load the model or its processor: {exc}") from exc
    model.to(device)
    model.eval()
    local = Path(name).expanduser()
    identity = {
        "backend": backend,
        "model": local.name if local.is_dir() else name,
        "dtype": str(model.dtype).removeprefix("torch."),
    }
    if local.is_dir():
        identity["sha256"] = local_fingerprint(local)
    return TorchLoaded(torch, device, processor, model, identity)


def positions_of(model: Any) -> int | None:
    """The model's context window from its config (``max_position_embeddings``), when it states one."""
    config = getattr(model, "config", None)
    for source in (config, getattr(config, "text_config", None)):
        value = getattr(source, "max_position_embeddings", None)
        if isinstance(value, int) and value > 0:
            return value
    return None
