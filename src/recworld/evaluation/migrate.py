"""Older ``run.json`` versions, brought to ``recworld.run/3`` explicitly: each key moved, none dropped.

* ``recworld.run/1`` (before typed records): the runner's counters were flat
  ``runner_*`` keys in ``counts``; the config held the engine's settings
  (``concurrency``, ``timeout_s``, ...) and the backend's (``base_url``,
  ``api_key_env``) at its top level, and times were Unix seconds.
* ``recworld.run/2``: the engine's settings were nested as ``runner``; the
  backend's (``base_url``, ``api_key_env``, ``model_options``) were still flat.
* ``recworld.run/3``: the config is :class:`~recworld.evaluation.config.EvalConfig`
  as it is now, with the backend's settings nested as ``backend``, and the header
  names the settings that made the run its own (``settings``, ``label``).

A key the migration does not know is not thrown away: the header then fails to
validate, naming it, as any unknown field does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["LEGACY_SCHEMAS", "migrate_header"]

LEGACY_SCHEMAS = ("recworld.run/1", "recworld.run/2")

# run/1 config keys that were the runner's; run/1 and run/2 keys that were the backend's.
_RUNNER_KEYS = ("concurrency", "timeout_s", "max_retries", "backoff_base_s", "backoff_max_s", "progress")
_BACKEND_KEYS = {"base_url": "base_url", "api_key_env": "api_key_env", "model_options": "options"}


def migrate_header(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` (a run/1 or run/2 header, as read) in the run/3 shape, not yet validated."""
    out = dict(data)
    schema = out.pop("schema")
    out["counts"] = _counts(out.get("counts") or {}) if schema == "recworld.run/1" else out.get("counts", {})
    config = dict(out.get("config") or _config_from_header(out))
    if schema == "recworld.run/1":
        config["runner"] = {key: config.pop(key) for key in _RUNNER_KEYS if key in config}
    backend = {new: config.pop(old) for old, new in _BACKEND_KEYS.items() if old in config}
    if backend:
        config["backend"] = backend
    out["config"] = config
    out["schema"] = "recworld.run/3"
    return out


def _counts(counts: Mapping[str, Any]) -> dict[str, Any]:
    """run/1 ``counts``: ``runner_sent`` and the like gathered under ``runner``."""
    out = {k: v for k, v in counts.items() if not k.startswith("runner_")}
    flat = {k.removeprefix("runner_"): v for k, v in counts.items() if k.startswith("runner_")}
    out["runner"] = {**flat, **dict(counts.get("runner") or {})}  # a nested block is kept, never dropped
    return out


def _config_from_header(header: Mapping[str, Any]) -> dict[str, Any]:
    """A header written without its config: what the header itself says was run."""
    return {
        "suite_dir": header.get("suite"),
        "model": header.get("model"),
        "mode": header.get("mode", "generate"),
        "variant": header.get("variant", "zero-shot"),
    }
