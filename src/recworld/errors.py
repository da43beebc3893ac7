"""The one exception tree of RecWorld.

Every error a user can cause (bad input file, bad option, unreachable model)
is a :class:`RecWorldError`. The command line turns it into one line on stderr
and exit code 2; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path


class RecWorldError(Exception):
    """Base class of every error RecWorld raises on purpose."""

    exit_code: int = 2


class ConfigError(RecWorldError):
    """An option, spec string or config file is invalid."""


class DataError(RecWorldError):
    """An input file is missing, malformed, or holds too little data.

    ``path`` and ``line`` (1-based) locate the problem when it has a place.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = None if path is None else Path(path)
        self.line = line
        self.field = field
        self.detail = message
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        what = f"field {self.field!r}: " if self.field else ""
        return f"{where}{what}{self.detail}"


class ModelError(RecWorldError):
    """A model backend cannot be loaded or keeps failing."""


class MissingDependencyError(ConfigError):
    """An optional extra is not installed; the message says what to install."""

    def __init__(self, feature: str, extra: str, package: str) -> None:
        super().__init__(f"{feature} needs the package {package!r}: pip install 'recworld[{extra}]'")
        self.extra = extra
        self.package = package


def require(module: str, *, feature: str, extra: str, package: str | None = None) -> object:
    """Import an optional heavy module, or raise a helpful :class:`MissingDependencyError`."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(feature, extra, package or module) from exc
