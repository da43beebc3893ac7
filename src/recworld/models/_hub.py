"""Fail fast when a Hugging Face model can be neither found locally nor downloaded.

``from_pretrained`` on a machine without network access retries the hub for
about 50 seconds before it says the model is missing. One short TCP probe
decides instead: a cached model is then loaded offline, an uncached one is a
clear error at once.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from recworld.errors import ModelError

PROBE_TIMEOUT_S = 2.0
PROXY_VARIABLES = ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
TRUE = ("1", "true", "yes", "on")


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def hub_reachable(endpoint: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a TCP connection to the hub opens within ``timeout_s`` (a proxy is trusted to work)."""
    if any(os.environ.get(v) for v in PROXY_VARIABLES):
        return True
    parts = urlsplit(endpoint)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def in_cache(repo_id: str) -> bool:
    """Whether the hub cache holds this repo's ``config.json``."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # an invalid repo id, an unreadable cache: treat as not cached
        return False
    return isinstance(found, str)


def load_kwargs(name: str, backend: str) -> dict[str, Any]:
    """Extra ``from_pretrained`` arguments for ``name``: offline when the hub is out of reach.

    A local directory needs nothing. Otherwise, when ``HF_HUB_OFFLINE`` is set
    or the hub does not answer, a cached model loads with
    ``local_files_only=True`` and an uncached one raises :class:`ModelError`.
    """
    if Path(name).expanduser().is_dir():
        return {}
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in TRUE
    endpoint = hub_endpoint()
    if not offline and hub_reachable(endpoint):
        return {}
    if in_cache(name):
        return {"local_files_only": True}
    why = "HF_HUB_OFFLINE is set" if offline else f"the hub ({endpoint}) cannot be reached"
    raise ModelError(
        f"{backend}:{name} is not in the local Hugging Face cache and {why}; "
        "download it on a connected machine or name a local directory"
    )
