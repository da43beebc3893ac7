"""Image references of items: which are local files, which are remote, and whether a file is an image.

An item's ``image`` field holds a local path (absolute, or relative to the
dataset folder) or a URL. Nothing here fetches URLs: describing needs the bytes
on disk, so remote references are only counted. A local file is opened with
Pillow and verified before any request is sent, so a broken file stops the run
with an error naming it instead of costing a model call.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from recworld.errors import DataError

# "http://", "s3://", "data:" ...; a one-letter scheme is a Windows drive ("C:\\"), not a URL.
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def is_remote(reference: str) -> bool:
    """True when ``reference`` is a URL (any scheme, ``data:`` included) rather than a file path."""
    return bool(_SCHEME.match(reference))


def resolve_local(reference: str, base_dir: Path | None) -> Path:
    """The file a local reference names; relative paths are taken from ``base_dir`` (the dataset folder)."""
    path = Path(reference).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return path.resolve()


@dataclass(frozen=True)
class ImageFile:
    """A verified local image: where it is, the hash of its bytes, and its format."""

    path: Path
    sha256: str
    format: str
    width: int
    height: int


def verify_image(path: Path, *, item_id: str | None = None) -> ImageFile:
    """Read and verify one image file; raise :class:`DataError` naming the file when it is unusable."""
    import io

    from PIL import Image, UnidentifiedImageError

    where = f" (item {item_id!r})" if item_id is not None else ""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read image{where}: {exc.strerror}", path=path, field="image") from exc
    try:
        with Image.open(io.BytesIO(data)) as probe:
            probe.verify()  # checks structure and checksums without decoding everything
        # verify() leaves the image unusable, and misses truncated pixel data: decode once more.
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            fmt, width, height = str(image.format), image.width, image.height
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise DataError(f"not a readable image{where}: {exc}", path=path, field="image") from exc
    return ImageFile(path, hashlib.sha256(data).hexdigest(), fmt, width, height)
