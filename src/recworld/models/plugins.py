"""Third-party backends: packages that register under the ``recworld.models`` entry-point group.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."recworld.models"]
    mybackend = "mypackage.recworld_backend:BACKEND"

The value names either a :class:`~recworld.models.backend.Backend` (the full
declaration: factory module, options class, capabilities, kind) or a plain
factory ``create(spec, config) -> Model`` (a chat backend without options).
``mybackend:some-name`` is then a model spec like any built-in one.

Discovery is lazy twice over: the installed packages' metadata is read the
first time a name is not a built-in (and for the "known backends" list of an
error message), and a plugin's own module is imported only when a spec names
it. A plugin that fails to import, or names something that is neither a
``Backend`` nor a callable, is a :class:`~recworld.errors.ConfigError` naming
the plugin, its package and the cause; other backends keep working. A plugin
named like a built-in backend is ignored (the built-in wins) with a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from recworld.errors import ConfigError
from recworld.models.backend import Backend

GROUP = "recworld.models"

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Plugin:
    """One registered name: where it points and which installed package declared it."""

    name: str
    value: str
    package: str
    entry: EntryPoint


def _package_of(entry: EntryPoint) -> str:
    dist = entry.dist
    return f"{dist.name} {dist.version}" if dist is not None else "an unnamed package"


@cache
def discovered() -> dict[str, tuple[Plugin, ...]]:
    """Every name registered in the group, with each package that registers it (usually one)."""
    found: dict[str, list[Plugin]] = {}
    for entry in entry_points(group=GROUP):
        name = entry.name.strip().lower()
        found.setdefault(name, []).append(Plugin(name, entry.value, _package_of(entry), entry))
    return {name: tuple(plugins) for name, plugins in sorted(found.items())}


def plugin_names(builtin: frozenset[str]) -> list[str]:
    """The plugin names a spec may use: those not shadowed by a built-in backend."""
    names = []
    for name, plugins in discovered().items():
        if name in builtin:
            _warn_shadowed(name, plugins[0].package)
        else:
            names.append(name)
    return names


@cache
def _warn_shadowed(name: str, package: str) -> None:
    _log.warning(
        "the model backend plugin %r from %s is ignored: a built-in backend has that name", name, package
    )


@cache
def load_plugin(name: str) -> Backend:
    """The backend a plugin name declares, importing the plugin's module once."""
    plugins = discovered()[name]
    if len(plugins) > 1:
        packages = ", ".join(p.package for p in plugins)
        raise ConfigError(f"the model backend {name!r} is registered by several packages ({packages})")
    plugin = plugins[0]
    where = f"the model backend plugin {name!r} ({plugin.value} from {plugin.package})"
    try:
        declared = plugin.entry.load()
    except Exception as exc:  # third-party code: any import failure is that plugin's, named as such
        raise ConfigError(f"{where} failed to load: {type(exc).__name__}: {exc}") from exc
    if isinstance(declared, Backend):
        return declared
    if callable(declared):
        return Backend(factory=declared)
    raise ConfigError(
        f"{where} names a {type(declared).__name__}; expected a recworld.models.Backend or a "
        "create(spec, config) function"
    )


def refresh() -> None:
    """Forget what was discovered, so packages installed since (or put on ``sys.path``) are seen."""
    discovered.cache_clear()
    load_plugin.cache_clear()
    _warn_shadowed.cache_clear()
