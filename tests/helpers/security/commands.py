"""Every command that takes ``--out`` or writes a file, as the ownership and kill tests run them.

A :class:`Writer` says how to run one command in a scratch folder against the
shared inputs of a :class:`World` (a small dataset, a suite with a run, a
LUNAR run with queries and a rating sheet, a zip, a dataset with posters),
which folder it writes, whether it builds that folder whole and swaps it in
(``swap``) or fills it in place, how to leave an earlier output of its own
there holding a user's files (``previous``), and the option that overrides a
refusal (``force``; None when the command has none).
"""

from __future__ import annotations

import csv
import os
import shutil
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from helpers.cli import recworld_exit_code, run_recworld
from helpers.lunar import lunar_responder
from helpers.lunar import lunar_server as respond_server
from helpers.multimodal import make_dataset
from helpers.security.worlds import write_ml_latest_small
from recworld.testing.fake_server import FakeOpenAIServer

USER_FILE = "notes-of-the-user.txt"
EVIL_RATER = '=HYPERLINK("http://evil.example","bob")'
USER_DEEP = "deep/inside/mine.csv"  # a user's file at depth, in a subfolder the command may also write


@dataclass
class World:
    """Inputs every writer reads, made once per session."""

    root: Path
    data: Path  # ml-latest-small folder
    suite: Path  # built, with one finished random run and its report
    zip: Path  # the same data as a zip, for ``data fetch --from``
    posters: Path  # a saved dataset whose items have local posters
    poster_root: Path
    lunar: Path  # a finished lunar synth + queries + annotation sheet
    lunar_url: str  # a LUNAR-schema server (the review's ``lunar`` fake-server mode)


def home(path: Path) -> None:
    os.environ["RECWORLD_HOME"] = str(path)


def run_main(argv: Sequence[object]) -> int:
    """:func:`helpers.cli.recworld_exit_code` over a list: ``recworld ARGV`` in a forked child."""
    return recworld_exit_code(*argv)


def build_world(root: Path, server: FakeOpenAIServer) -> World:
    home(root / "home")
    data = write_ml_latest_small(root / "data" / "ml-latest-small")
    suite = root / "suite"
    argv = ["build", "--dataset", data, "--out", suite, "--per-measure", "5"]
    ran = run_recworld(*argv, "--measures", "kg_movie_genre,mem_item_item", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    ran = run_recworld("eval", suite, "--model", "random", "--no-progress")
    assert ran.returncode == 0, ran.stderr
    archive = root / "ml-latest-small.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(data.iterdir()):
            zf.write(file, f"ml-latest-small/{file.name}")
    posters = Path(make_dataset(root / "img", n_items=6, n_users=4).save(root / "img" / "cache"))
    lunar = root / "lunar"
    url = server.base_url
    synth = ["lunar", "synth", "--anchors", "lunar-demo", "--out", lunar, "--model", "openai:x"]
    ran = run_recworld(*synth, "--base-url", url, "--users", "1", "--weeks", "1", "--max-slots", "1")
    assert ran.returncode == 0, ran.stderr
    ran = run_recworld("lunar", "queries", lunar, "--model", "openai:x", "--base-url", url)
    assert ran.returncode == 0, ran.stderr
    ran = run_recworld("lunar", "annotate", lunar, "--histories", "1", "--queries", "2")
    assert ran.returncode == 0, ran.stderr
    fill_ratings(lunar / "annotation" / "sheet.csv", lunar / "annotation" / "ratings.csv")
    return World(root, data, suite, archive, posters, root / "img" / "posters", lunar, url)


def fill_ratings(sheet: Path, out: Path) -> Path:
    """The review's ``gen/fill_ratings.py``: two raters score every row of a blank sheet."""
    with sheet.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["item_id", "rater", "dimension", "score"])
        for n, row in enumerate(rows):
            writer.writerow([row["item_id"], "ann1", row["dimension"], 1 + n % 5])
            writer.writerow([row["item_id"], '=HYPERLINK("http://evil.example","bob")', row["dimension"], 5])
    return out


def copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    return target


def plant(folder: Path) -> dict[str, bytes]:
    """A user's own files in ``folder``, one at the top and one deep inside; returns them by relative path."""
    files = {USER_FILE: b"my own notes\n", USER_DEEP: b"user,data\n1,2\n"}
    for relative, data in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_bytes(data)
    return files


@dataclass(frozen=True)
class Writer:
    """One command that writes: how to run it, what it writes, and what was there before."""

    name: str
    argv: Callable[[World, Path], list[object]]
    out: Callable[[Path], Path]
    swap: bool
    previous: Callable[[World, Path], None] | None = None  # an earlier output of its own, at out(work)
    inputs: Callable[[World, Path], None] | None = None  # what it reads, copied into the work folder
    force: str | None = "--force"
    home: bool = False  # writes into RECWORLD_HOME (work/home)
    # False: killed in a child of a clean forkserver (kill_child), not of the test process: lunar
    # synth's Anonymeter attacks use polars, whose thread pool deadlocks in a child forked from a
    # process that had used it
    forks: bool = True


def _suite_copy(world: World, work: Path) -> None:
    copy(world.suite, work / "suite")


def _lunar_copy(world: World, work: Path) -> None:
    copy(world.lunar, work / "lun")


def _fetched(world: World, work: Path) -> None:
    home(work / "home")
    ran = run_recworld("data", "fetch", "ml-latest-small", "--from", world.zip)
    assert ran.returncode == 0, ran.stderr


def _export(world: World, work: Path) -> None:
    ran = run_recworld("export", world.suite, "--to", "hf", "--out", work / "exp")
    assert ran.returncode == 0, ran.stderr


def _report(world: World, work: Path) -> None:
    ran = run_recworld("report", world.suite, "--out", work / "report")
    assert ran.returncode == 0, ran.stderr


WRITERS: tuple[Writer, ...] = (
    Writer(
        "build",
        lambda w, d: [
            *["build", "--dataset", w.data, "--out", d / "suite", "--per-measure", "5"],
            *["--measures", "kg_movie_genre,mem_item_item", "--no-progress"],
        ],
        lambda d: d / "suite",
        swap=True,
        previous=_suite_copy,  # a rebuild over a suite with runs/ and a report (K2, F4)
    ),
    Writer(
        "build-new",
        lambda w, d: [
            *["build", "--dataset", w.data, "--out", d / "fresh", "--per-measure", "5"],
            *["--measures", "kg_movie_genre", "--no-progress"],
        ],
        lambda d: d / "fresh",
        swap=True,  # K1: a fresh build
    ),
    Writer(
        "eval",
        lambda w, d: ["eval", w.suite, "--model", "random", "--out", d / "run", "--no-progress"],
        lambda d: d / "run",
        swap=False,
    ),
    Writer(
        "report",
        lambda w, d: ["report", w.suite, "--out", d / "report"],
        lambda d: d / "report",
        swap=False,
        previous=_report,
    ),
    Writer(
        "analyze",
        lambda w, d: ["analyze", d / "suite", "--model", "popularity", "--no-progress"],
        lambda d: d / "suite" / "report",
        swap=False,
        inputs=_suite_copy,
    ),
    Writer(
        "export",
        lambda w, d: ["export", w.suite, "--to", "lm-eval", "--out", d / "exp"],
        lambda d: d / "exp",
        swap=True,
        previous=_export,
        force=None,
    ),
    Writer(
        "data-fetch",
        lambda w, d: ["data", "fetch", "ml-latest-small", "--from", w.zip, "--force"],
        lambda d: d / "home" / "datasets" / "ml-latest-small",
        swap=True,
        previous=_fetched,
        force=None,
        home=True,
    ),
    Writer(
        "describe-images",
        lambda w, d: [
            *["describe-images", "--dataset", w.posters, "--model", "scripted", "--out", d / "desc"],
            *["--image-root", w.poster_root, "--no-progress"],
        ],
        lambda d: d / "desc",
        swap=True,
    ),
    Writer(
        "lunar-synth",
        lambda w, d: [
            *["lunar", "synth", "--anchors", "lunar-demo", "--out", d / "lun", "--model", "openai:x"],
            *["--base-url", w.lunar_url, "--users", "1", "--weeks", "1", "--max-slots", "1", "--no-progress"],
        ],
        lambda d: d / "lun",
        swap=False,
        forks=False,
    ),
    Writer(
        "lunar-queries",
        lambda w, d: [
            *["lunar", "queries", d / "lun", "--model", "openai:y", "--base-url", w.lunar_url],
            *["--no-progress"],
        ],
        lambda d: d / "lun",
        swap=False,
        inputs=_lunar_copy,
        force=None,
    ),
    Writer(
        "lunar-eval",
        lambda w, d: [
            *["lunar", "eval", d / "lun", "--model", "openai:a", "--base-url", w.lunar_url],
            *["--judge", "openai:j", "--judge-base-url", w.lunar_url, "--context", "none", "--no-progress"],
        ],
        lambda d: d / "lun",
        swap=False,
        inputs=_lunar_copy,
        force=None,
    ),
    Writer(
        "lunar-ablate",
        lambda w, d: [
            *["lunar", "ablate", d / "lun", "--model", "openai:a", "--base-url", w.lunar_url],
            *["--judge", "openai:j", "--judge-base-url", w.lunar_url, "--no-progress"],
        ],
        lambda d: d / "lun",
        swap=False,
        inputs=_lunar_copy,
        force=None,
    ),
    Writer(
        "lunar-report",
        lambda w, d: ["lunar", "report", d / "lun"],
        lambda d: d / "lun",
        swap=False,
        inputs=_lunar_copy,
        force=None,
    ),
    Writer(
        "lunar-annotate",
        lambda w, d: ["lunar", "annotate", d / "lun", "--histories", "1", "--queries", "1", "--seed", "3"],
        lambda d: d / "lun" / "annotation",
        swap=False,
        inputs=_lunar_copy,
    ),
    Writer(
        "lunar-agreement",
        # --out named: the default moves to a new agreement/ folder when the sheet's is not claimable
        lambda w, d: [
            "lunar",
            "agreement",
            d / "lun" / "annotation" / "ratings.csv",
            "--out",
            d / "lun" / "annotation",
        ],
        lambda d: d / "lun" / "annotation",
        swap=False,
        inputs=_lunar_copy,
    ),
)
BY_NAME = {w.name: w for w in WRITERS}


def prepare(writer: Writer, world: World, work: Path, *, with_previous: bool = True) -> None:
    """The work folder as the command finds it: its inputs, and an earlier output holding a user's files."""
    home(work / "home")
    if writer.inputs is not None:
        writer.inputs(world, work)
    if with_previous and writer.previous is not None:
        writer.previous(world, work)
    if writer.out(work).is_dir():
        plant(writer.out(work))
    (work / USER_FILE).write_bytes(b"beside the output\n")


def lunar_server() -> FakeOpenAIServer:
    return respond_server(lunar_responder())
