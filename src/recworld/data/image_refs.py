"""Image references of items: which are local files, which may be read, and whether a file is an image.

An item's ``image`` field holds a local path (absolute, or relative to the
dataset folder) or a URL. Nothing here fetches URLs: describing needs the bytes
on disk, so remote references are only counted.

A dataset is untrusted input, and whatever image it names may be posted to a
model server, so a local reference is used only when

1. it resolves (``..`` and symbolic links followed) inside one of the
   :class:`ImageRoots`: the dataset's own folder or a folder the user named
   with ``--image-root``;
2. it is a regular file of at most :data:`recworld.capped.IMAGE_LIMIT` bytes;
3. its first bytes are a PNG, JPEG, GIF or WebP signature (checked before any
   other byte is read, and before Pillow sees it);
4. Pillow, restricted to that one format and with its decompression-bomb
   guard raised to an error, verifies it, and it has at most
   :data:`MAX_IMAGE_PIXELS` pixels.

Anything else raises :class:`RefusedImageError`; callers skip the item and count
the reason (:func:`screen_images`).
"""

from __future__ import annotations

import hashlib
import warnings
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from recworld.capped import RefusedFileError, is_remote, read_image
from recworld.errors import ConfigError, DataError

if TYPE_CHECKING:
    from recworld.data.dataset import Dataset

# 40 megapixels is far above what any vision model takes (LLaVA-1.6 tiles at most 672x1344).
MAX_IMAGE_PIXELS = 40_000_000


class RefusedImageError(DataError):
    """A local image reference that may not be read or sent; ``reason`` is what gets counted."""

    def __init__(self, reason: str, path: Path, detail: str = "", *, item_id: str | None = None) -> None:
        self.reason = reason
        where = f" (item {item_id!r})" if item_id is not None else ""
        super().__init__(f"{reason}{where}{': ' + detail if detail else ''}", path=path, field="image")


def resolve_local(reference: str, base_dir: Path | None) -> Path:
    """The file a local reference names; relative paths are taken from ``base_dir`` (the dataset folder).

    Symbolic links are resolved, so the result is where the bytes really are.
    """
    path = Path(reference).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return path.resolve()


@dataclass(frozen=True)
class ImageRoots:
    """The folders local images may come from (each resolved, so links cannot widen them)."""

    folders: tuple[Path, ...] = ()

    @classmethod
    def of(cls, folders: Iterable[str | Path], *, check: bool = False) -> ImageRoots:
        """Resolve ``folders``; with ``check`` a missing one is a :class:`ConfigError` (a mistyped flag)."""
        out: list[Path] = []
        for folder in folders:
            path = Path(folder).expanduser().resolve()
            if check and not path.is_dir():
                raise ConfigError(f"option --image-root: {folder} is not a folder")
            if path not in out:
                out.append(path)
        return cls(tuple(out))

    def __add__(self, other: ImageRoots) -> ImageRoots:
        return ImageRoots.of([*self.folders, *other.folders])

    def contains(self, path: Path) -> bool:
        return any(path.is_relative_to(root) for root in self.folders)

    def to_json(self) -> list[str]:
        return [str(root) for root in self.folders]


def dataset_folder(name_or_path: str) -> Path:
    """The folder a ``--dataset`` argument stands for (as ``resolve_dataset`` finds it).

    Its images may be read without ``--image-root``: the dataset's own folder.
    """
    from recworld import paths

    fetched = paths.datasets_dir() / name_or_path
    bare = "/" not in name_or_path and "\\" not in name_or_path and name_or_path not in {".", ".."}
    if bare and (fetched / "dataset.json").exists():
        return fetched.resolve()
    path = Path(name_or_path).expanduser().resolve()
    return path if path.is_dir() else path.parent


@dataclass(frozen=True)
class ImageFile:
    """A verified local image: where it is, the hash of its bytes, and its format."""

    path: Path
    sha256: str
    format: str
    width: int
    height: int


def _read_checked(path: Path, item_id: str | None) -> tuple[bytes, str]:
    """The bytes of ``path`` and its format (:func:`recworld.capped.read_image`: size and signature first)."""
    try:
        return read_image(path)
    except RefusedFileError as exc:
        raise RefusedImageError(exc.reason, path, exc.why, item_id=item_id) from None


def _verify_pixels(
    data: bytes, fmt: str, path: Path, item_id: str | None, *, decode: bool
) -> tuple[int, int]:
    """Pillow verify (one format only, bombs are errors); ``decode`` also decodes every pixel."""
    import io

    from PIL import Image

    if Image.MAX_IMAGE_PIXELS is None:  # someone switched the guard off: switch it back on
        Image.MAX_IMAGE_PIXELS = 2 * MAX_IMAGE_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=[fmt]) as probe:
                width, height = probe.size
                if width * height > MAX_IMAGE_PIXELS:
                    raise RefusedImageError("too many pixels", path, f"{width}x{height}", item_id=item_id)
                probe.verify()  # structure and checksums, without decoding everything
            if decode:  # verify() misses truncated pixel data
                with Image.open(io.BytesIO(data), formats=[fmt]) as image:
                    image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise RefusedImageError("too many pixels", path, str(exc), item_id=item_id) from None
    except RefusedImageError:
        raise
    except Exception as exc:  # Pillow raises many types for malformed files
        raise RefusedImageError(
            "unreadable image", path, f"{type(exc).__name__}: {exc}", item_id=item_id
        ) from None
    return width, height


def check_image(
    reference: str,
    roots: ImageRoots,
    base_dir: Path | None = None,
    *,
    item_id: str | None = None,
    decode: bool = True,
) -> ImageFile:
    """The verified image a local ``reference`` names, or :class:`RefusedImageError` saying why not."""
    path = resolve_local(reference, base_dir)
    if not roots.contains(path):
        allowed = ", ".join(roots.to_json()) or "none"
        raise RefusedImageError(
            "outside the image roots", path, f"allowed: {allowed}; name its folder with --image-root",
            item_id=item_id,
        )  # fmt: skip
    data, fmt = _read_checked(path, item_id)
    width, height = _verify_pixels(data, fmt, path, item_id, decode=decode)
    return ImageFile(path, hashlib.sha256(data).hexdigest(), fmt, width, height)


# -- a whole dataset -------------------------------------------------------------------------------


@dataclass
class ImageScreen:
    """Every item's image reference, sorted: usable local files, URLs, refusals, and items without one."""

    kept: dict[str, tuple[str, ImageFile]] = field(default_factory=dict)  # item id -> (reference, file)
    remote: list[str] = field(default_factory=list)
    refused: dict[str, RefusedImageError] = field(default_factory=dict)
    without_image: int = 0

    def reasons(self) -> dict[str, int]:
        """How many images were refused for each reason."""
        return dict(sorted(Counter(e.reason for e in self.refused.values()).items()))

    def summary(self) -> str:
        """The refusals in one line: counts by reason, then the first in full."""
        counts = ", ".join(f"{n} {reason}" for reason, n in self.reasons().items())
        first = self.refused[min(self.refused)] if self.refused else None
        return f"{len(self.refused)} item images skipped ({counts}); first: {first}"

    def warning(self) -> str | None:
        """One line for stderr, or None when nothing was refused."""
        return f"warning: {self.summary()}" if self.refused else None


def local_references(dataset: Dataset) -> list[tuple[str, str | None]]:
    """``(item id, stripped image reference or None)`` for every item, in item order."""
    if "image" not in dataset.items.columns:
        return [(str(i), None) for i in dataset.items["item_id"]]
    out: list[tuple[str, str | None]] = []
    for item_id, value in zip(dataset.items["item_id"], dataset.items["image"], strict=True):
        missing = value is None or (isinstance(value, float) and pd.isna(value)) or not str(value).strip()
        out.append((str(item_id), None if missing else str(value).strip()))
    return out


def screen_images(
    dataset: Dataset,
    roots: ImageRoots,
    base_dir: Path | None = None,
    *,
    limit: int | None = None,
    decode: bool = True,
) -> ImageScreen:
    """Check every local item image (at most ``limit`` kept); refusals are collected, not raised."""
    screen = ImageScreen()
    for item_id, reference in local_references(dataset):
        if reference is None:
            screen.without_image += 1
        elif is_remote(reference):
            screen.remote.append(item_id)
        elif limit is None or len(screen.kept) < limit:
            try:
                image = check_image(reference, roots, base_dir, item_id=item_id, decode=decode)
            except RefusedImageError as exc:
                screen.refused[item_id] = exc
            else:
                screen.kept[item_id] = (reference, image)
    return screen
