"""Every command that writes, killed at every kill point it passes, then rerun (review cases K1-K4, K8-K10).

For each command (:data:`commands.WRITERS`) and each kill point it passes
(:data:`recworld.io.KILL_POINTS`), the command is killed (``os._exit`` in a
forked child: no cleanup runs, as with ``kill -9``) at every passage of that
point, one run per passage. After each kill:

* the user's files in and beside the output are byte-identical;
* a folder built whole and swapped in is the old output or the new one, never
  a mix (with ``renameat2`` exchange even before recovery; with two renames
  once the next run's recovery has run), and nothing it carried is lost;
* a folder filled in place holds only whole files and no marker it did not
  hold before (the marker comes only after success);

and then the same command, rerun, succeeds and leaves exactly what an
uninterrupted run leaves, with no staging folder, trash or journal behind.
Swapped outputs run both swap paths (exchange, and the two-rename fallback).

The uninterrupted run every case compares with is made once per writer and
swap path (module-scoped, only read), and an earlier output that takes a
command to make (``report``'s) is made once and copied into each work folder.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from helpers.security.commands import BY_NAME, USER_DEEP, USER_FILE, World, Writer, home, prepare, run_main
from helpers.security.kill_child import killed_in_clean_child
from helpers.security.kills import KILLED, VOLATILE_FILES, killed_at, litter, passages, tree
from recworld.io import KILL_POINTS, OUTPUT_MARKER, output_kinds, recover
from recworld.io import swap as swap_module

# The kill points each command passes (a nested dataset swap inside a staging folder counts).
SWAP = {"file.staged", "file.replaced", "swap.journaled", "swap.placed"}
INPLACE = {"file.staged", "file.replaced"}
CLAIMS = {"claim.recorded", "marker.written"}
POINTS: dict[str, set[str]] = {
    "build": SWAP | {"swap.swept"},  # over a suite with runs/, a report and a user's files
    "build-new": SWAP,
    "eval": INPLACE | CLAIMS,
    "report": INPLACE,  # into its own earlier report: already marked
    "analyze": INPLACE | CLAIMS,
    "export": SWAP | {"swap.swept"},
    "data-fetch": SWAP | {"swap.swept"},  # over an earlier fetch: a file put in the cache is kept
    "describe-images": SWAP,
    "lunar-synth": INPLACE | CLAIMS | {"swap.journaled", "swap.placed"},
    "lunar-queries": INPLACE,
    "lunar-eval": INPLACE,
    "lunar-ablate": INPLACE,
    "lunar-report": INPLACE,
    "lunar-annotate": INPLACE,  # into its own earlier sheet
    "lunar-agreement": INPLACE | CLAIMS,  # beside the sheet, which it joins
}
FAST = {
    ("build", "swap.placed", "exchange"),
    ("build", "swap.old-moved", "rename"),
    ("eval", "claim.recorded", "in-place"),
}
# LUNAR's secret date offset comes from a fresh random key per run folder unless one is given:
# the reference and every rerun share this one, so "the rerun differs" compares like with like.
LUNAR_KEY = "5e" * 32


def _cases() -> list[object]:
    cases = []
    for name, points in POINTS.items():
        swapped = BY_NAME[name].swap
        for mode in ("exchange", "rename") if swapped else ("in-place",):
            replaces = BY_NAME[name].previous is not None  # an old folder to move aside
            wanted = points | ({"swap.old-moved"} if mode == "rename" and replaces else set())
            for point in sorted(wanted, key=KILL_POINTS.index):
                if mode == "rename" and not point.startswith("swap."):
                    continue  # the file steps are the same on both paths
                slow = () if (name, point, mode) in FAST else (pytest.mark.slow,)
                cases.append(pytest.param(name, point, mode, marks=slow, id=f"{name}-{point}-{mode}"))
    return cases


def _compared(writer: Writer, work: Path) -> Path:
    return work / "suite" if writer.name == "analyze" else writer.out(work)


def _tree(writer: Writer, work: Path) -> dict[str, object]:
    # analyze runs anew, and its report's time tables and figure read the clock: its runs are compared
    report = ("report.html", "report.md", "metrics.csv", "table.csv")
    skip = (*VOLATILE_FILES, *report) if writer.name == "analyze" else VOLATILE_FILES
    return tree(_compared(writer, work), base=work, skip=skip)


def _user_files(writer: Writer, work: Path) -> dict[Path, bytes]:
    found = {work / USER_FILE: (work / USER_FILE).read_bytes()}
    out = writer.out(work)
    for relative in (USER_FILE, USER_DEEP):
        if (out / relative).is_file():
            found[out / relative] = (out / relative).read_bytes()
    return found


def _whole(folder: Path) -> None:
    """Every JSON file parses and every JSON-lines file ends in whole lines (journals may be torn)."""
    for path in folder.rglob("*.json"):
        json.loads(path.read_bytes())
    for path in folder.rglob("*.jsonl"):
        if path.name.endswith(".journal.jsonl"):
            continue
        data = path.read_bytes()
        assert not data or data.endswith(b"\n"), path
        for line in data.splitlines():
            json.loads(line)


Reference = tuple[Path, list[tuple[str, Path]]]


@pytest.fixture(scope="module")
def references() -> dict[tuple[str, str], Reference]:
    """Each writer's uninterrupted run, once per swap path, made when a case first needs it."""
    return {}


@pytest.fixture(scope="module")
def templates() -> dict[str, Path | None]:
    """Each writer's prepared work folder, made once where copying it is the same as preparing anew."""
    return {}


def _uninterrupted(
    name: str,
    mode: str,
    world: World,
    references: dict[tuple[str, str], Reference],
    factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Reference:
    """What an uninterrupted run of ``name`` leaves, and the kill points it passes (run once per module).

    Every case of a writer and swap path compares with the same run: only read, never written.
    """
    if (name, mode) not in references:
        writer = BY_NAME[name]
        work = factory.mktemp(f"reference-{name}-{mode}")
        monkeypatch.setenv("RECWORLD_HOME", str(work / "home"))
        prepare(writer, world, work)
        codes: list[int] = []
        seen = passages(lambda: codes.append(run_main(writer.argv(world, work))))
        assert codes == [0]
        references[name, mode] = (work, seen)
    return references[name, mode]


def _names_its_folder(folder: Path) -> bool:
    """Whether a file or link below ``folder`` holds ``folder``'s own path (a copy elsewhere would differ)."""
    mine = str(folder).encode()
    for path in folder.rglob("*"):
        if path.is_symlink():
            if mine in os.fsencode(os.readlink(path)):
                return True
        elif path.is_file() and mine in path.read_bytes():
            return True
    return False


def _prepare(
    writer: Writer,
    world: World,
    work: Path,
    templates: dict[str, Path | None],
    factory: pytest.TempPathFactory,
) -> None:
    """:func:`prepare`, as a copy of a folder prepared once where that is byte for byte the same.

    A writer's earlier output is made by running the command (``report``'s takes seconds, and each
    case prepares a folder per passage); copied from a template, it holds the same bytes, unless a
    file or link in it names the template's own path: then every folder is prepared anew.
    """
    if writer.previous is None:  # only copies of the session's inputs: cheap already
        prepare(writer, world, work)
        return
    if writer.name not in templates:
        template = factory.mktemp(f"template-{writer.name}")
        prepare(writer, world, template)
        templates[writer.name] = None if _names_its_folder(template) else template
    template = templates[writer.name]
    if template is None:
        prepare(writer, world, work)
        return
    shutil.copytree(template, work, symlinks=True, dirs_exist_ok=True)
    home(work / "home")


@pytest.fixture
def reference(
    world: World,
    references: dict[tuple[str, str], Reference],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Reference:
    """What an uninterrupted run leaves, and the kill points it passes (for the writer under test)."""
    name, mode = request.node.callspec.params["name"], request.node.callspec.params["mode"]
    if mode == "rename":
        monkeypatch.setattr(swap_module, "USE_EXCHANGE", False)
    monkeypatch.setenv("RECWORLD_LUNAR_KEY", LUNAR_KEY)
    return _uninterrupted(name, mode, world, references, tmp_path_factory, monkeypatch)


@pytest.mark.parametrize(("name", "point", "mode"), _cases())
def test_a_kill_at_every_passage_loses_nothing_and_a_rerun_finishes(
    name: str,
    point: str,
    mode: str,
    world: World,
    reference: Reference,
    templates: dict[str, Path | None],
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    writer = BY_NAME[name]
    ref_work, seen = reference
    expected = _tree(writer, ref_work)
    at = [i for i, (p, _) in enumerate(seen) if p == point]  # where each passage of the point falls
    assert at, f"{name} no longer passes {point} (update POINTS)"
    marker_file = writer.out(ref_work) / OUTPUT_MARKER
    marked_from = next(
        (i for i, (p, path) in enumerate(seen) if p == "file.replaced" and path == marker_file), len(seen)
    )
    for nth, index in enumerate(at, start=1):
        work = tmp_path / f"kill-{nth}"
        work.mkdir()
        monkeypatch.setenv("RECWORLD_HOME", str(work / "home"))
        _prepare(writer, world, work, templates, tmp_path_factory)
        out = writer.out(work)
        mine = _user_files(writer, work)
        before = _tree(writer, work)
        kinds_before = output_kinds(out)
        argv = writer.argv(world, work)
        if writer.forks:
            code = killed_at(point, nth, lambda: run_main(argv))  # noqa: B023 (called at once)
        else:
            code = killed_in_clean_child(point, nth, argv, exchange=swap_module.USE_EXCHANGE)
        assert code == KILLED
        capfd.readouterr()
        if writer.swap and mode == "exchange":  # one atomic step: a reader sees old or new, at any kill
            assert _tree(writer, work) in (before, expected), f"{point} #{nth}: a mix"
        recover(out)
        assert {p: p.read_bytes() for p in mine} == mine, f"{point} #{nth}: a user's file changed"
        if writer.swap:
            assert _tree(writer, work) in (before, expected), f"{point} #{nth}: a mix"
        else:
            _whole(out)
            if index < marked_from:  # killed before the marker was in place: none, or the old one
                assert output_kinds(out) == kinds_before, f"{point} #{nth}: marked before success"
        assert run_main(writer.argv(world, work)) == 0, capfd.readouterr().err
        assert _tree(writer, work) == expected, f"{point} #{nth}: the rerun differs"
        assert {p: p.read_bytes() for p in mine} == mine
        assert litter(work) == [], f"{point} #{nth}: left behind"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(POINTS))
def test_the_table_names_every_kill_point_each_command_passes(
    name: str,
    world: World,
    references: dict[tuple[str, str], Reference],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The uninterrupted run the kill cases compare with (exit 0 asserted) passes exactly POINTS[name]."""
    monkeypatch.setenv("RECWORLD_LUNAR_KEY", LUNAR_KEY)
    mode = "exchange" if BY_NAME[name].swap else "in-place"
    _work, seen = _uninterrupted(name, mode, world, references, tmp_path_factory, monkeypatch)
    assert {p for p, _ in seen} == POINTS[name]
