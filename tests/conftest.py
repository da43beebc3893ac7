"""Shared test fixtures."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from filelock import FileLock

# A shell starts a background job (``make test &``, a CI step's runner) with SIGINT ignored, and
# every child inherits that: the Ctrl-C tests would see nothing arrive. A handler set here, unlike
# SIG_IGN, is reset to the default in every process the tests start.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# pytest-xdist runs one worker per core: a worker whose model engines each start a thread per core
# would oversubscribe them (llama.cpp's threads spin-wait, torch's too). Each worker's share goes
# to every engine it starts, and to the processes it spawns, through OMP_NUM_THREADS (which
# recworld.models._common.cpu_threads honours). The timing tests run outside xdist, with every core.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "").isdecimal():
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    os.environ.setdefault(
        "OMP_NUM_THREADS", str(max(1, _cores // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    )

# Repo-relative, git-ignored: real data that fixtures fetch once and reuse across runs.
TEST_DATA = Path(__file__).resolve().parent / ".data"
# Headless Chromium renders the HTML reports (scripts/ensure-test-tools.sh installs it for make test).
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


@pytest.fixture(autouse=True)
def _isolated_home(
    _registries_restored: None, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Keep every test's fetched data and caches out of the user's home.

    It asks for :func:`_registries_restored` first, so that check is set up before ``monkeypatch``
    and reads the registries after every ``monkeypatch`` undo.
    """
    home = tmp_path_factory.mktemp("recworld-home")
    monkeypatch.setenv("RECWORLD_HOME", str(home))
    return home


@contextlib.contextmanager
def _recworld_home(path: Path) -> Iterator[None]:
    old = os.environ.get("RECWORLD_HOME")
    os.environ["RECWORLD_HOME"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("RECWORLD_HOME", None)
        else:
            os.environ["RECWORLD_HOME"] = old


@pytest.fixture(scope="session")
def ml100k_fetched() -> Path:
    """The real MovieLens-100K as ``recworld data fetch ml-100k`` stores it (canonical Parquet + ``raw/``).

    Fetched once into ``tests/.data`` from the ``recbole==1.2.1`` wheel on PyPI, the
    same way a user fetches it. A failed fetch fails the tests that need it: it
    is never a silent skip.
    """
    from recworld.data.fetch import fetch

    home = TEST_DATA / "home"
    home.mkdir(parents=True, exist_ok=True)
    # Parallel workers (and concurrent runs) fetch one at a time; the later ones find it there.
    with FileLock(str(TEST_DATA / "home.lock"), timeout=900), _recworld_home(home):
        return fetch("ml-100k").path


@pytest.fixture(scope="session")
def ml100k_raw(ml100k_fetched: Path) -> Path:
    """The RecBole atomic files (``ml-100k.inter``, ``.item``, ``.user``) of the fetched ML-100K."""
    raw = ml100k_fetched / "raw"
    assert (raw / "ml-100k.inter").is_file(), f"fetched ML-100K has no raw files in {raw}"
    return raw


@pytest.fixture
def chromium(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run headless Chromium with ``args`` (``--dump-dom URL``, ...), each call in a fresh profile."""
    assert CHROMIUM is not None, "chromium is not installed: run scripts/ensure-test-tools.sh"
    profiles = itertools.count()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        profile = tmp_path / f"chromium-profile-{next(profiles)}"
        command = [str(CHROMIUM), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)

    return run


@pytest.fixture(scope="session")
def harness_python() -> Path:
    """The python of the harness venv (lm-eval, inspect_ai, datasets), built on first use.

    A build that fails fails the tests that need it (see ``tests/helpers/export_harness.py``).
    """
    from helpers.export_harness import ensure_venv, venv_python

    ensure_venv()
    return venv_python()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """While the harness venv is not built, the first test that needs it may build it: give it the time."""
    from helpers.export_harness import BUILD_TIMEOUT_S, is_built

    if is_built():
        return
    for item in items:
        if "harness_python" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.timeout(BUILD_TIMEOUT_S + 900))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A skipped test is a failed one: ``make test`` runs every test, or says which one could not run."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid}: skipped ({reason}), but every test must run or fail"


@functools.cache
def _installed_plugins() -> tuple[str, ...]:
    """The plugin names the installed packages declare (read once: scanning them takes milliseconds)."""
    from importlib.metadata import entry_points

    from recworld.models.plugins import GROUP

    return tuple(sorted({e.name.strip().lower() for e in entry_points(group=GROUP)}))


def _registries() -> dict[str, object]:
    """What the process-wide registries hold now: context settings, chat and embedder backends, plugins.

    The plugin table is read without filling its cache: an empty cache means "what is installed".
    """
    from recworld.lunar.contexts import registered
    from recworld.models import plugins
    from recworld.models.registry import BACKENDS, EMBEDDERS

    installed = plugins.discovered() if plugins.discovered.cache_info().currsize else _installed_plugins()
    return {
        "contexts": [f"{c.name}={c.__module__}.{c.__qualname__}" for c in registered()],
        "backends": dict(BACKENDS),
        "embedders": dict(EMBEDDERS),
        "plugins": sorted(installed),
    }


def _changes(before: dict[str, object], after: dict[str, object]) -> str:
    def names(value: object) -> list[str]:
        return sorted(value) if isinstance(value, dict) else list(value)  # type: ignore[call-overload]

    changed = [f"{k}: {names(before[k])} -> {names(after[k])}" for k in before if before[k] != after[k]]
    return "; ".join(changed)


@pytest.fixture(autouse=True, scope="module")
def _registries_restored_by_module() -> Iterator[None]:
    """A module's own module-scoped registrations are undone by the end of the module."""
    before = _registries()
    yield
    changed = _changes(before, _registries())
    if changed:
        pytest.fail(f"this module left registries changed: {changed}")


@pytest.fixture
def _registries_restored(_registries_restored_by_module: None) -> Iterator[None]:
    """A test leaves the context, backend and plugin registries as it found them (or it fails).

    Every test has it through the autouse :func:`_isolated_home`, which asks for it before anything
    else (so it is torn down last).

    A registration a test needs is a fixture that undoes it (``monkeypatch.setitem``,
    ``register_context`` with ``unregister_context``, ``plugins.refresh()`` after the ``sys.path``
    change is undone). A module-scoped one is checked by :func:`_registries_restored_by_module`.
    """
    before = _registries()
    yield
    changed = _changes(before, _registries())
    if changed:
        pytest.fail(f"the test left registries changed: {changed}")
