"""``recworld models``: the backends a spec may name (built-in and plugins), and the local models known.

Nothing is loaded: the rows come from the registry's load-free
:class:`~recworld.models.backend.Backend` declarations and the plugin entry
points, so a broken plugin shows as a row, not as a crash.
"""

from __future__ import annotations

from typing import Any

from recworld.console.options import Given, JsonOutput, with_options

COLUMNS = ("spec", "kind", "source", "answers", "options")


def model_rows() -> list[dict[str, Any]]:
    """One row per backend (chat, then embedding) and per built-in local model name."""
    from recworld.models.plugins import discovered
    from recworld.models.registry import BACKENDS, EMBEDDERS, LLAMACPP_NAMES

    rows: list[dict[str, Any]] = []
    for kind, table in (("chat", BACKENDS), ("embedding", EMBEDDERS)):
        for name, backend in table.items():
            rows.append(
                {
                    "spec": name if not backend.needs_name else f"{name}:NAME",
                    "kind": kind,
                    "source": "built-in",
                    "answers": "in-process" if not backend.sends_requests else "model requests",
                    "options": ", ".join(sorted(backend.options.model_fields)),
                }
            )
    builtin = set(BACKENDS) | set(EMBEDDERS)
    for name, plugins in discovered().items():
        shadowed = " (ignored: a built-in has this name)" if name in builtin else ""
        rows.append(
            {
                "spec": f"{name}:NAME",
                "kind": "plugin",
                "source": f"{plugins[0].package} ({plugins[0].value}){shadowed}",
                "answers": "model requests",
                "options": "",
            }
        )
    for name in LLAMACPP_NAMES:
        rows.append(
            {
                "spec": f"llamacpp:{name}",
                "kind": "local model",
                "source": "built-in GGUF (fetched on first use)",
                "answers": "generate, loglik, rank",
                "options": "",
            }
        )
    return rows


@with_options(JsonOutput)
def models_command(*, given: Given) -> None:
    """List the model backends (built-in and plugins) and the local models a spec may name."""
    from recworld.console.output import emit_json, print_table

    rows = model_rows()
    if given.build().as_json:
        emit_json({"models": rows})
        return
    print_table(COLUMNS, [[r[c] for c in COLUMNS] for r in rows])
