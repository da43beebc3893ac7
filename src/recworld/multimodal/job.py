""":class:`DescribeJob`: everything ``recworld describe-images`` takes, declared once.

The command's flags and help are generated from this class
(:mod:`recworld.console.options`), and a Python caller builds the same object.
The model's connection settings are the model registry's own ``ModelConfig``
(``backend``: ``--base-url``, ``--api-key-env``, ``--allow-insecure-http``,
``--model-option``) and the requests' are ``RunnerConfig`` (``runner``:
``--concurrency``, ``--timeout``, ``--max-retries``, ...), nested as in
``EvalConfig``, so neither is re-declared here. A describe request waits longer
than an eval one: the runner's default timeout here is 300 s.

For callers written before ``backend`` existed, ``base_url``, ``api_key_env`` and
``allow_insecure_http`` given at the top level are moved into it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from recworld.console.options import IMAGE_ROOT, OUT, Flag, Force, Nested
from recworld.models.registry import ModelConfig
from recworld.records import MAX_INT, MAX_TOKENS, Settings
from recworld.runner import DEFAULT_FAIL_ON_ERROR, FailOnError, RunnerConfig

__all__ = ["DESCRIBE_TIMEOUT_S", "DescribeConfig", "DescribeJob", "InstructionStyle", "KindChoice"]

KindChoice = Literal["auto", "poster", "product"]
# ``paper``: describe the image only, never transcribing titles, names or brands printed on it
# (the paper's poster description is "without" them, so the option text does not give the
# item away); ``transcribe``: the earlier instructions, which copy printed text verbatim.
InstructionStyle = Literal["paper", "transcribe"]


class DescribeConfig(Settings):
    """What changes which images are described and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: KindChoice = Field(
        default="auto", description="poster, product, or auto (posters for movie datasets)."
    )
    limit: int | None = Field(
        default=None, ge=1, le=MAX_INT, description="Describe at most N images (first by item id)."
    )
    max_tokens: int = Field(default=512, ge=1, le=MAX_TOKENS, description="Longest description, in tokens.")
    instructions: InstructionStyle = Field(
        default="paper",
        description="'paper' (describe the image, never copy printed titles, names or brands) "
        "or 'transcribe'.",
    )


DESCRIBE_TIMEOUT_S = 300.0  # one image description may take minutes on a busy server
_FLAT_BACKEND = ("base_url", "api_key_env", "allow_insecure_http")


class DescribeJob(Settings):
    """Everything ``recworld describe-images`` needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: Annotated[
        str, Field(description="A fetched dataset name, a dataset cache folder, or raw files.")
    ]
    # The spec; with a model object (run_describe(job, model=obj)), the name the journal records it by.
    model: Annotated[
        str,
        Field(description="Vision model spec, e.g. openai:llava-hf/llava-v1.6-mistral-7b-hf."),
        Flag(metavar="SPEC"),
    ]
    backend: Annotated[ModelConfig, Nested(omit=("seed", "suite_dir"))] = Field(default_factory=ModelConfig)
    out: Annotated[
        Path | None,
        Field(
            description="Dataset cache to write: new, empty or an earlier output "
            "(default: the input + '-described')."
        ),
        OUT,
    ] = None
    in_place: Annotated[
        bool, Field(description="Rewrite the input dataset cache instead of a new one."), Flag("--in-place")
    ] = False
    force: Force = False
    image_roots: Annotated[
        tuple[Path, ...],
        Field(description="A folder images may be read from besides the dataset's (repeatable)."),
        IMAGE_ROOT,
    ] = ()
    state_dir: Annotated[
        Path | None,
        Field(description="Journal and response cache (default: .OUT.describe beside OUT)."),
        Flag(metavar="DIR"),
    ] = None
    config: DescribeConfig = Field(default_factory=DescribeConfig)
    # Judged as eval's and every LUNAR stage's (recworld.runner.policy.judge): failed images / images.
    fail_on_error: FailOnError = DEFAULT_FAIL_ON_ERROR
    runner: Annotated[RunnerConfig, Nested(omit=("seed",))] = Field(
        default_factory=lambda: RunnerConfig(timeout_s=DESCRIBE_TIMEOUT_S)
    )

    @model_validator(mode="before")
    @classmethod
    def _describe_timeout(cls, data: Any) -> Any:
        """A runner given as settings (``--concurrency 4``) still waits :data:`DESCRIBE_TIMEOUT_S`."""
        if isinstance(data, dict) and isinstance(data.get("runner"), dict):
            data = {**data, "runner": {"timeout_s": DESCRIBE_TIMEOUT_S, **data["runner"]}}
        return data

    @model_validator(mode="before")
    @classmethod
    def _flat_backend(cls, data: Any) -> Any:
        """``DescribeJob(base_url=...)`` (the keywords before ``backend``) still works."""
        if not isinstance(data, dict) or not any(k in data for k in _FLAT_BACKEND):
            return data
        flat = {k: data[k] for k in _FLAT_BACKEND if k in data}
        backend = data.get("backend") or {}
        if isinstance(backend, ModelConfig):
            backend = backend.model_dump(exclude_unset=True)
        rest = {k: v for k, v in data.items() if k not in _FLAT_BACKEND}
        return {**rest, "backend": {**backend, **flat}}
