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


def from_validation(exc: Exception, *, path: str | Path | None = None, line: int | None = None) -> DataError:
    """One :class:`DataError` for a pydantic ``ValidationError``: the first error, with its field path.

    Every reader of a typed record converts the same way, so messages look alike
    everywhere: ``FILE:LINE: field 'a.b': <what pydantic said>``.
    """
    errors = getattr(exc, "errors", None)
    first: dict[str, object] = errors()[0] if callable(errors) and errors() else {}
    loc = first.get("loc") or ()
    where = ".".join(str(p) for p in loc) if isinstance(loc, tuple | list) else str(loc)
    # pydantic prefixes a validator's own ValueError with "Value error, ": noise in a one-line error.
    message = str(first.get("msg") or exc).removeprefix("Value error, ")
    return DataError(message, path=path, line=line, field=where or None)


class RunError(RecWorldError):
    """A run started and cannot give a result worth reading: it stops with exit code 3.

    Examples: the server rejects the key (401/403), the model does not exist
    (404), every connection is refused, or more samples failed than
    ``--fail-on-error`` allows. What was finished is kept, so a rerun resumes.
    """

    exit_code = 3


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
