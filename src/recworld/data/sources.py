"""Turn a folder, zip or name into a :class:`Dataset`, reusing parsed results.

Parsing ML-25M takes tens of seconds; hashing its files takes about one. So a
loaded source is saved as Parquet under ``home()/cache/sources/<key>``, where
the key hashes the bytes of every file the format reads (plus the metadata
file and the loader version). Editing any input changes the key; renaming or
moving the folder does not.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
from collections.abc import Iterator
from pathlib import Path

from recworld import paths
from recworld.capped import check_line_lengths, sha256_file
from recworld.data import zips
from recworld.data.dataset import Dataset
from recworld.data.formats import SourceFormat, detect_format, find_source_root, get_format
from recworld.data.metadata import apply_metadata
from recworld.data.metadata_match import REPORT_SCHEMA
from recworld.errors import ConfigError, DataError, RecWorldError
from recworld.io import atomic_directory, recover

# Bump when a loader's output changes, so old caches are not reused.
# 2: same-time interactions keep file order; ids, ratings, timestamps and foreign keys validated.
LOADER_VERSION = "2"
_HEAD = 4 << 20  # what source_key reads of a table before hashing it


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes (:func:`recworld.capped.sha256_file`: a FIFO or a device is a DataError)."""
    return sha256_file(path, missing="no such file")


def cache_root() -> Path:
    return paths.home() / "cache"


def extract_zip(archive: Path) -> Path:
    """Unpack a zip's dataset files once into ``cache/raw/<sha256>`` and return that folder.

    Only the members some format reads are unpacked, up to a size cap
    (:mod:`recworld.data.zips`). A corrupt archive, a damaged member (bad CRC,
    truncated data), an encrypted member or a compression method Python cannot
    read is one DataError naming the archive and the member; the half-built
    folder is removed.
    """
    target = cache_root() / "raw" / file_digest(archive)[:24]
    recover(target)
    if target.is_dir():
        return target
    with atomic_directory(target) as stage:
        zips.unpack(archive, stage)
    return target


def _in_archive(exc: RecWorldError, unpacked: Path, archive: Path) -> RecWorldError:
    """``exc`` as the user should read it: about ``archive`` and its member, not the cache folder."""
    names = sorted({str(unpacked.resolve()), str(unpacked)}, key=len, reverse=True)

    def shown(text: str) -> str:
        for name in names:
            text = text.replace(name + "/", f"{archive}:").replace(name, str(archive))
        return text

    if isinstance(exc, DataError):
        where = None if exc.path is None else shown(str(exc.path))
        return DataError(shown(exc.detail), path=where, line=exc.line, field=exc.field)
    if type(exc) is not ConfigError:  # its own constructor, no cache path in it (a missing extra)
        return exc
    return ConfigError(shown(str(exc)))


@contextlib.contextmanager
def opened_source(
    path: Path, format: str | None, metadata: Path | None
) -> Iterator[tuple[Path, SourceFormat]]:
    """:func:`prepare`, for a block that reads the files.

    For a zip, any error inside the block (no known format, a bad line, a
    parser out of memory, Ctrl-C) removes the unpacked copy, so nothing is left
    in the cache; a RecWorld error then names the zip and its member instead
    of the cache folder.
    """
    source = Path(path).expanduser()
    unpacked = extract_zip(source) if _is_zip(source) else None
    try:
        yield prepare(unpacked or source, format, metadata)
    except BaseException as exc:
        if unpacked is None:
            raise
        zips.remove_unpacked(unpacked)
        if not isinstance(exc, RecWorldError):
            raise
        raise _in_archive(exc, unpacked, source) from None


def _is_zip(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() == ".zip"


def source_folder(path: Path) -> Path:
    """The folder of raw files that ``path`` (a folder, a file in it, or a zip) stands for."""
    if not path.exists():
        raise DataError("no such file or folder", path=path)
    if _is_zip(path):
        path = extract_zip(path)
    return find_source_root(path)


def source_key(fmt: SourceFormat, root: Path, metadata: Path | None) -> tuple[str, dict[str, str]]:
    """The cache key of a source and the per-file digests it was built from.

    The cheap refusal comes first: a table's line over the parser's cap near the top of the file
    (a 2 GiB first line) is one DataError after a few MiB, not after hashing the whole file.
    """
    files = fmt.files(root)
    if fmt.tables:
        for path in files:
            check_line_lengths(path, upto=_HEAD)
    digests = {p.name: file_digest(p) for p in files}
    if metadata is not None:
        digests[f"metadata:{metadata.name}"] = file_digest(metadata)
        # Relative poster paths resolve against the metadata file's folder.
        digests["metadata-dir"] = str(metadata.resolve().parent)
    # A cached join carries its match report, so a new report schema must not reuse old caches.
    report = [REPORT_SCHEMA] if metadata is not None else []
    pairs = (f"{k}={v}" for k, v in sorted(digests.items()))
    text = "\n".join([LOADER_VERSION, fmt.name, *report, *pairs])
    return hashlib.sha256(text.encode()).hexdigest()[:32], digests


def default_name(fmt: SourceFormat, root: Path) -> str:
    inter = next(iter(sorted(root.glob("*.inter"))), None) if fmt.name == "recbole" else None
    return inter.stem if inter is not None else root.name


def load_uncached(
    root: Path, fmt: SourceFormat, name: str, metadata: Path | None, digests: dict[str, str]
) -> Dataset:
    """Parse ``root`` with ``fmt`` and join ``metadata``; no cache involved."""
    dataset = fmt.load(root, name)
    if metadata is not None:
        dataset = apply_metadata(dataset, metadata)
    source = {**dataset.source, "format": fmt.name, "path": str(root.resolve()), "files": digests}
    return dataclasses.replace(dataset, source=source)


def prepare(path: Path, format: str | None, metadata: Path | None) -> tuple[Path, SourceFormat]:
    """Locate the raw folder and its format, checking an explicit ``--format`` against the files."""
    if metadata is not None and not metadata.is_file():
        raise DataError("metadata file not found", path=metadata)
    root = source_folder(Path(path).expanduser())
    if format is None:
        return root, detect_format(root)
    fmt = get_format(format)
    if not fmt.detect(root):
        needs = " + ".join(fmt.required)
        raise DataError(f"these files are not in the {fmt.name} format (it needs {needs})", path=root)
    return root, fmt


def load_source(
    path: Path,
    format: str | None = None,
    *,
    name: str | None = None,
    metadata: Path | None = None,
) -> Dataset:
    """Load a folder (or zip) of published files, detecting the format unless ``format`` is given.

    The parsed result is cached by content hash; a second call with unchanged
    files reads Parquet instead of parsing text.
    """
    with opened_source(path, format, metadata) as (root, fmt):
        name = name or default_name(fmt, root)
        key, digests = source_key(fmt, root, metadata)
        cached = cache_root() / "sources" / key
        recover(cached)  # a write a kill interrupted is finished (or undone) before the cache is read
        if (cached / "dataset.json").exists():
            try:
                dataset = Dataset.load(cached)
            except (DataError, OSError, ValueError):
                pass  # a damaged cache is rebuilt below
            else:
                return dataclasses.replace(dataset, name=name)
        dataset = load_uncached(root, fmt, name, metadata, digests)
        dataset.save(cached)
        return dataset
