"""The options of ``recworld lunar``, declared once as typed aliases, and the configs built from them.

Names, wording and defaults follow ``recworld eval`` (``--api-key-env``,
``--timeout``, ``--max-retries``, ``--progress/--no-progress``, ``--json``,
``--dry-run``, ``--prices``). Every option has help text; a test walks them all.
A value the typed configs reject becomes one ``invalid value for --flag`` line
(:func:`recworld.console.app.option_error`), never a config field name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import BaseModel

if TYPE_CHECKING:
    from recworld.lunar.config import EmbedderConfig, SessionConfig

SPECS = "openai:NAME, llamacpp:NAME, vllm:NAME, hf:ORG/NAME or scripted:FILE.json"

Model = Annotated[str, typer.Option("--model", metavar="SPEC", help=f"Model spec. Forms: {SPECS}.")]
Judge = Annotated[
    str, typer.Option("--judge", metavar="SPEC", help="Judge model spec (same forms as --model).")
]
BaseUrl = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible server URL of --model.")]
ApiKeyEnv = Annotated[
    str, typer.Option("--api-key-env", help="Name of the env var holding --model's API key.")
]
JudgeBaseUrl = Annotated[str | None, typer.Option("--judge-base-url", help="Server URL of --judge.")]
JudgeKeyEnv = Annotated[
    str, typer.Option("--judge-api-key-env", help="Name of the env var holding --judge's API key.")
]
Concurrency = Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight per model.")]
Attempts = Annotated[
    int,
    typer.Option("--attempts", min=1, help="Tries per structured output before giving up on that piece."),
]
Timeout = Annotated[float, typer.Option("--timeout", min=0.001, help="Seconds per request attempt.")]
MaxRetries = Annotated[int, typer.Option("--max-retries", min=0, help="Transport retries per request.")]
Seed = Annotated[int, typer.Option("--seed", help="Seed for sampling, judge order and backoff jitter.")]
Insecure = Annotated[
    bool,
    typer.Option("--allow-insecure-http", help="Allow sending API keys over plain http beyond loopback."),
]
FailOnError = Annotated[
    float,
    typer.Option(
        "--fail-on-error",
        min=0.0,
        max=1.0,
        help="Exit 3 (after writing what finished) when more than this share of pieces failed.",
    ),
]
# None (neither flag): SessionConfig decides per model spec, compact for llamacpp: only.
Compact = Annotated[
    bool | None,
    typer.Option(
        "--compact/--no-compact",
        help="Decode structured outputs with short strings and fixed-length arrays "
        "[default: on for llamacpp: models, off otherwise].",
        show_default=False,
    ),
]
RetryFailures = Annotated[
    bool,
    typer.Option(
        "--retry-failures",
        help="Ask again, past the cache, every piece whose cached reply was rejected "
        "(a plain rerun replays cached replies).",
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run", help="Print request counts and the first prompt per stage; send and write nothing."
    ),
]
Prices = Annotated[
    Path | None,
    typer.Option(
        "--prices", help="With --dry-run: JSON lines or CSV of model, input, output USD per 1M tokens."
    ),
]
MaxTokens = Annotated[
    int, typer.Option("--max-tokens", min=1, help="Answer length cap (the generic baseline's is 256).")
]
EmbedBaseUrl = Annotated[str | None, typer.Option("--embed-base-url", help="Server URL of --embedder.")]
EmbedKeyEnv = Annotated[
    str, typer.Option("--embed-api-key-env", help="Name of the env var holding --embedder's API key.")
]
Root = Annotated[Path, typer.Argument(metavar="ROOT", help="LUNAR folder (written by lunar synth).")]

# Config fields that are not the flag's name (others: ``a_b`` is ``--a-b``).
SESSION_FLAGS = {"timeout_s": "--timeout", "max_attempts": "--attempts"}
JUDGE_FLAGS = SESSION_FLAGS | {
    "model": "--judge",
    "base_url": "--judge-base-url",
    "api_key_env": "--judge-api-key-env",
}
EMBED_FLAGS = {"spec": "--embedder", "base_url": "--embed-base-url", "api_key_env": "--embed-api-key-env"}
STAGE_FLAGS = {
    "out_dir": "--out",
    "root": "ROOT",
    "answer_max_tokens": "--max-tokens",
    "max_slots_per_day": "--max-slots",
    "max_records_per_slot": "--max-records",
    "consistency_threshold": "--threshold",
    "max_regenerations": "--regenerations",
    "contexts": "--context",
}

C = TypeVar("C", bound=BaseModel)


def build(cls: type[C], fields: Mapping[str, Any], flags: Mapping[str, str] = STAGE_FLAGS) -> C:
    """Validate a config; a bad value becomes one ``invalid value for --flag`` line (exit 2)."""
    from pydantic import ValidationError

    from recworld.console.app import option_error

    try:
        return cls.model_validate(dict(fields))
    except ValidationError as exc:
        raise option_error(exc, flags) from None


def shared(values: Mapping[str, Any]) -> dict[str, Any]:
    """The session settings every model of a command shares, from the command's option values."""
    out = {
        "concurrency": values["concurrency"],
        "max_attempts": values["attempts"],
        "timeout_s": values["timeout"],
        "max_retries": values["max_retries"],
        "seed": values["seed"],
        "compact": values["compact"],
        "allow_insecure_http": values["allow_insecure_http"],
    }
    return out | {"retry_failures": bool(values.get("retry_failures", False))}


def session(values: Mapping[str, Any], *, judge: bool = False, **extra: Any) -> SessionConfig:
    """The :class:`SessionConfig` of ``--model`` (or ``--judge``): its own server and key variable."""
    from recworld.lunar.config import SessionConfig

    if judge:
        own = {
            "model": values["judge"],
            "base_url": values["judge_base_url"],
            "api_key_env": values["judge_key_env"],
        }
    else:
        own = {"model": values["model"], "base_url": values["base_url"], "api_key_env": values["api_key_env"]}
    return build(SessionConfig, own | shared(values) | extra, JUDGE_FLAGS if judge else SESSION_FLAGS)


def embedder(values: Mapping[str, Any]) -> EmbedderConfig | None:
    """The ``--embedder`` config, or None when the option is not given."""
    from recworld.lunar.config import EmbedderConfig

    if not values.get("embedder"):
        return None
    fields = {
        "spec": values["embedder"],
        "base_url": values["embed_base_url"],
        "api_key_env": values["embed_key_env"],
        "allow_insecure_http": values["allow_insecure_http"],
    }
    return build(EmbedderConfig, fields, EMBED_FLAGS)
