"""``export_suite``: one suite, one target, one atomically written, byte-reproducible directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from recworld.errors import ConfigError
from recworld.export import hf, inspect, lm_eval
from recworld.export.common import Suite, export_directory, load_suite, provenance

Writer = Callable[[Suite, Path, dict[str, Any]], list[str]]
TARGETS: dict[str, Writer] = {"lm-eval": lm_eval.write, "inspect": inspect.write, "hf": hf.write}


def export_suite(
    suite_dir: Path, target: str, out: Path, *, measures: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """Export ``suite_dir`` for ``target`` into ``out``; returns the provenance plus the task/config names."""
    writer = TARGETS.get(target)
    if writer is None:
        raise ConfigError(f"unknown export target {target!r}; choose one of: {', '.join(TARGETS)}")
    suite = load_suite(suite_dir, measures)
    meta = provenance(suite, target)
    with export_directory(out, meta) as staging:
        names = writer(suite, staging, meta)
    return {**meta, "names": names}
