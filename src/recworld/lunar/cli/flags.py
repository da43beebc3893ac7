"""How the models of a LUNAR command show on the command line: declared once, for every command.

* :data:`MODEL` and :data:`JUDGE`: the flags of one model's own settings (spec,
  server, key variable, window, backend options), ``--model``, ``--judge``;
* :func:`role_flags`: the same flags for a model a context setting declares
  (:class:`~recworld.lunar.contexts.RoleSpec`), named after its own flag
  (``--X-model``, ``--X-base-url``, ...), so no setting is named here;
* :data:`SHARED`: the settings every model of a command shares (``--concurrency``,
  ``--timeout``, ``--attempts``, ...), typed once and applied to each model;
* :data:`EMBEDDER`: the eval's embedder's flags;
* :class:`RunOptions`: ``--dry-run``, ``--prices``, ``--progress``, ``--json``, ``--smoke``.

:mod:`recworld.lunar.cli.options` turns these into each command's options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from recworld.console.options import AsJson, Flag, key_values
from recworld.lunar.contexts.roles import RoleSpec
from recworld.lunar.llm.config import LUNAR_RUNNER, EmbedderConfig
from recworld.models.registry import spec_forms
from recworld.records import FrozenRecord, Settings


def _key_values(flag: str, help: str) -> Flag:
    """A repeatable ``KEY=VALUE`` option (backend options)."""
    return Flag(flag, help=help, metavar="KEY=VALUE", parse=key_values, cli_type=list[str])


# The flags of one model's own settings, by path inside its SessionConfig.
MODEL: dict[str, Flag] = {
    "model": Flag("--model", metavar="SPEC", help=f"Model spec. Forms: {spec_forms(baselines=False)}."),
    "backend.base_url": Flag("--base-url", help="OpenAI-compatible server URL of --model."),
    "backend.api_key_env": Flag("--api-key-env", help="Name of the env var holding --model's API key."),
    "backend.n_ctx": Flag(
        "--n-ctx", help="Context window a local --model is loaded with (llamacpp, vllm); else assumed."
    ),
    "backend.options": _key_values(
        "--model-option", "A backend option of --model, e.g. n_gpu_layers=0 (repeatable)."
    ),
}
JUDGE: dict[str, Flag] = {
    "model": Flag("--judge", metavar="SPEC", help="Judge model spec (same forms as --model)."),
    "backend.base_url": Flag("--judge-base-url", help="Server URL of --judge."),
    "backend.api_key_env": Flag("--judge-api-key-env", help="Name of the env var holding --judge's API key."),
    "backend.options": _key_values("--judge-model-option", "A backend option of --judge (repeatable)."),
}
# Settings every model of a command shares: typed once (on the first model's paths), applied to each
# model, and to each embedder whose config has the same path (backend.allow_insecure_http, the runner's
# timeout, retries and concurrency). A runner setting's default is LUNAR's (LUNAR_RUNNER), not the
# Runner class's: the help says which; an embedder's untyped default is EMBED_RUNNER's.
SHARED: dict[str, Flag] = {
    "max_attempts": Flag("--attempts"),
    "runner.concurrency": Flag(
        "--concurrency", help="Requests in flight per model.", default_help=str(LUNAR_RUNNER.concurrency)
    ),
    "runner.timeout_s": Flag(
        "--timeout", help="Seconds per request attempt.", default_help=str(LUNAR_RUNNER.timeout_s)
    ),
    "runner.max_retries": Flag(
        "--max-retries", help="Transport retries per request.", default_help=str(LUNAR_RUNNER.max_retries)
    ),
    "compact": Flag("--compact/--no-compact", default_help="on for llamacpp: models, off otherwise"),
    "backend.allow_insecure_http": Flag(
        "--allow-insecure-http", help="Allow sending API keys over plain http beyond loopback."
    ),
    "retry_failures": Flag("--retry-failures"),
}
# A command whose stage config has no seed of its own seeds its models with this flag.
SESSION_SEED = {"backend.seed": Flag("--seed", help="Seed for sampling and backoff jitter.")}
EMBEDDER_FORMS = spec_forms("embedding")
# The embedders' own settings, by path inside their EmbedderConfig (nested like a SessionConfig).
EMBEDDER: dict[str, Flag] = {
    "embedder.model": Flag("--embedder", help=f"Embedder spec: {EMBEDDER_FORMS}."),
    "embedder.backend.base_url": Flag("--embed-base-url", help="Server URL of --embedder."),
    "embedder.backend.api_key_env": Flag(
        "--embed-api-key-env", help="Name of the env var holding --embedder's API key."
    ),
    "embedder.backend.options": _key_values(
        "--embedder-option", "A backend option of --embedder, e.g. device=cpu or dimensions=256 (repeatable)."
    ),
}


def role_flags(spec: RoleSpec) -> dict[str, Flag]:
    """The flags of a context setting's declared model, by path inside its config, named after ``spec.flag``.

    A chat model's ``--X-model`` gives ``--X-base-url``, ``--X-api-key-env`` and
    ``--X-model-option``; an embedder's ``--X-embedder`` gives ``--X-embed-base-url``,
    ``--X-embed-api-key-env`` and ``--X-embedder-option``.
    """
    flag = spec.flag
    help = spec.why[:1].upper() + spec.why[1:] + ("" if spec.why.endswith(".") else ".")
    if spec.kind == "embedder":
        help += f" Forms: {EMBEDDER_FORMS}."
    stem = flag.removesuffix("-model") if spec.kind == "model" else flag.removesuffix("-embedder") + "-embed"
    default = spec.default.name if isinstance(spec.default, EmbedderConfig) else None
    own = Flag(flag, metavar="SPEC", help=help) if spec.kind == "model" else Flag(flag, help=help)
    if default is not None:
        own = Flag(flag, help=help, default_help=default)
    return {
        "model": own,
        "backend.base_url": Flag(f"{stem}-base-url", help=f"Server URL of {flag}."),
        "backend.api_key_env": Flag(
            f"{stem}-api-key-env", help=f"Name of the env var holding {flag}'s API key."
        ),
        "backend.options": _key_values(f"{flag}-option", f"A backend option of {flag} (repeatable)."),
    }


class RunOptions(FrozenRecord, Settings):
    """How a command runs, beside what it computes."""

    dry_run: Annotated[
        bool,
        Field(description="Print request counts and the first prompt per stage; send and write nothing."),
    ] = False
    prices: Annotated[
        Path | None,
        Field(description="With --dry-run: JSON lines or CSV of model, input, output USD per 1M tokens."),
    ] = None
    progress: Annotated[
        bool,
        Field(description="Show progress on stderr: live on a terminal, else a line at least every 30 s."),
        Flag("--progress/--no-progress"),
    ] = True
    as_json: AsJson = False
    smoke: Annotated[
        bool,
        Field(description="A tiny preset (1 user, 1 week, 1 record, 1 query, one context); flags win."),
        Flag("--smoke"),
    ] = False


def session_roles(*, judge: bool) -> dict[str, dict[str, Flag]]:
    """``{"answer": MODEL, "judge": JUDGE}`` for a command with a judge; ``{"llm": MODEL}`` otherwise.

    The models context settings declare are added by ``lunar_options(..., contexts=True)``.
    """
    if not judge:
        return {"llm": MODEL}
    return {"answer": MODEL, "judge": JUDGE}
