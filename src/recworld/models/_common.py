"""Small helpers shared by the local backends (llama.cpp, transformers, vLLM).

They keep the prompt a base model sees, and the way choice scores are turned
into an answer, identical across backends so that the same question gets the
same prompt whichever engine runs the weights.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from recworld.capped import open_regular
from recworld.chat import Message

if TYPE_CHECKING:
    from recworld.models.options import TorchOptions

# A base model (no chat template) is prompted completion-style; its answer
# follows this cue, and scored choices are appended after one space.
ANSWER_CUE = "Answer:"


def flatten_messages(messages: Sequence[Message]) -> str:
    """Render chat turns as one completion prompt for a base model.

    System and user turns are kept verbatim, earlier assistant turns become
    worked answers, and the prompt ends with the answer cue, so the model's
    continuation is the answer itself.
    """
    parts: list[str] = []
    for message in messages:
        if message.role == "assistant":
            parts.append(f"{ANSWER_CUE} {message.content}")
        else:
            parts.append(message.content)
    parts.append(ANSWER_CUE)
    return "\n\n".join(parts)


def completion_choice(choice: str) -> str:
    """The continuation scored for ``choice`` after a flattened prompt (one leading space)."""
    return " " + choice


def log_softmax(logits: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
    """Numerically stable log-softmax over the last axis, in float64."""
    values = np.asarray(logits, dtype=np.float64)
    shifted = values - values.max(axis=-1, keepdims=True)
    out: npt.NDArray[np.float64] = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return out


def best_choice(choices: Sequence[str], logprobs: Sequence[float]) -> str:
    """The highest-scoring choice; ties go to the earliest (deterministic)."""
    best = 0
    for i, value in enumerate(logprobs):
        if value > logprobs[best]:
            best = i
    return choices[best]


def file_fingerprint(path: Path, n_bytes: int = 1 << 20) -> str:
    """SHA-256 of the first MiB: names a model file without hashing gigabytes or leaking its path.

    Opened through :func:`recworld.capped.open_regular`: a FIFO named ``model.bin`` is an error, not a hang.
    """
    digest = hashlib.sha256()
    with open_regular(path) as handle:
        digest.update(handle.read(n_bytes))
    return digest.hexdigest()


def cpu_threads(requested: int | None) -> int:
    """Threads for a CPU engine: the configured number, else ``OMP_NUM_THREADS``, else every usable core.

    ``OMP_NUM_THREADS`` is the cap torch, BLAS and OpenMP already honour; a positive integer there
    caps llama.cpp too (so several processes sharing the cores, such as test workers, do not each
    spin a thread per core). Any other value is ignored, as OpenMP ignores it.
    """
    if requested is not None and requested > 0:
        return requested
    import os

    capped = os.environ.get("OMP_NUM_THREADS", "").strip()
    if capped.isascii() and capped.isdigit() and int(capped) > 0:
        return int(capped)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def torch_placement(options: TorchOptions) -> tuple[str, Any]:
    """Device and dtype for a transformers model from its typed options.

    ``device`` defaults to CUDA when present, else CPU; ``dtype`` is "auto" or
    a torch dtype name such as "bfloat16".
    """
    import torch

    from recworld.errors import ConfigError

    device = options.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if options.dtype == "auto":
        return device, "auto"
    dtype = getattr(torch, options.dtype, None)
    if not isinstance(dtype, torch.dtype):
        raise ConfigError(f"option 'dtype': {options.dtype!r} is not a torch dtype (try bfloat16, float32)")
    return device, dtype
