"""Review 3's filesystem defects as their reproductions (``shared/reviews/security.md`` D1-D8, D12, D14-D16).

The classes these belong to are attacked by the properties in
``test_untrusted_disk.py`` and ``test_zip_layouts.py``; here each case runs as
the review ran it, through the CLI.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.cli import recworld_exit_code, run_recworld
from helpers.security.commands import World, copy
from helpers.security.disk_states import deadline, snapshot
from helpers.security.worlds import write_ml_latest_small

SMALL = ["--per-measure", "5", "--measures", "kg_movie_genre", "--no-progress"]


def _fresh_suite(world: World, where: Path) -> Path:
    """A copy of the session's suite without its runs (a copied suite cannot resume them: other path)."""
    suite = copy(world.suite, where)
    shutil.rmtree(suite / "runs")
    (suite / "runs").mkdir()
    return suite


def _build(world: World, out: Path) -> list[object]:
    return ["build", "--dataset", world.data, "--out", out, *SMALL]


def _one_line(err: str) -> bool:
    return "Traceback" not in err and "a bug in recworld" not in err


def test_d1_a_forged_journal_naming_a_sibling_deletes_nothing(world: World, work: Path) -> None:
    """A1: ``"trash": "victim"`` beside ``--out``; the sibling ``victim/`` was rmtree'd."""
    parent = work / "gp" / "parent"
    (parent / "victim").mkdir(parents=True)
    (parent / "victim" / "important.txt").write_text("precious")
    copy(world.suite, parent / "suite")
    journal = {"schema": "recworld.swap/1", "staging": "x", "trash": "victim", "new": [0, 0], "carry": False}
    (parent / ".suite.swap.json").write_text(json.dumps(journal))
    before = snapshot(work / "gp")
    ran = run_recworld(*_build(world, parent / "suite"))
    assert ran.returncode in (0, 2) and _one_line(ran.stderr)
    assert "ignored" in ran.stderr  # reported, in one line
    after = snapshot(work / "gp")
    assert after["parent/victim/important.txt"] == ("file", b"precious")
    assert after["parent/.suite.swap.json"] == before["parent/.suite.swap.json"]
    assert {p for p in before if not p.startswith("parent/suite/")} <= set(after)


@pytest.mark.parametrize("writer", ["report", "eval"])
def test_d1_a_shared_suite_with_a_journal_naming_the_folder_above_empties_nothing(
    writer: str, world: World, work: Path
) -> None:
    """A2, A3: ``"trash": ".."`` in ``.report.swap.json`` or ``runs/.SLUG.swap.json`` emptied ``..``."""
    downloads = work / "u" / "Downloads"
    downloads.mkdir(parents=True)
    (downloads / "tax-return.pdf").write_text("mine")
    suite = _fresh_suite(world, downloads / "shared-suite")
    (suite / "runs" / "random__generate__zero-shot").mkdir()
    (suite / "runs" / "random__generate__zero-shot" / "my-notes.txt").write_text("notes")
    forged = {"schema": "recworld.swap/2", "staging": "x", "trash": "..", "new": [0, 0], "old": None}
    forged |= {"carry": False, "seal": "0" * 64}
    (suite / ".report.swap.json").write_text(json.dumps(forged))
    (suite / "runs" / ".random__generate__zero-shot.swap.json").write_text(json.dumps(forged))
    before = snapshot(downloads)
    argv: list[object] = ["report", suite] if writer == "report" else ["eval", suite, "--model", "random"]
    ran = run_recworld(*([*argv, "--no-progress"] if writer == "eval" else argv))
    assert _one_line(ran.stderr) and ran.returncode in (0, 2), ran.stderr
    after = snapshot(downloads)
    assert [p for p in before if after.get(p) != before[p] and not p.startswith("shared-suite/report")] == []


def test_d2_a_users_backup_beside_the_suite_is_not_taken_for_trash(world: World, work: Path) -> None:
    """A4: ``.suite.old-v1/`` was merged into the rebuilt suite and its ``manifest.json`` deleted."""
    suite = _fresh_suite(world, work / "b" / "suite")
    backup = work / "b" / ".suite.old-v1"
    (backup / "runs" / "my-old-run").mkdir(parents=True)
    (backup / "manifest.json").write_text("old manifest")
    (backup / "questions.txt").write_text("q")
    before = snapshot(backup)
    ran = run_recworld(*_build(world, suite))
    assert ran.returncode == 0, ran.stderr
    assert snapshot(backup) == before
    assert not (suite / "runs" / "my-old-run").exists() and not (suite / "questions.txt").exists()


def test_d3_force_keeps_a_users_temporary_looking_file_at_any_depth(world: World, work: Path) -> None:
    """A5: ``drafts/.chapter1.20240101.tmp`` was swept by ``eval --out m --force``."""
    mine = {
        "drafts/.chapter1.20240101.tmp": b"mine",
        ".run.json.abcdefgh.tmp": b"also mine",
        "a/b/.x.0123abcd.tmp": b"deep",
    }
    for relative, data in mine.items():
        (work / "m" / relative).parent.mkdir(parents=True, exist_ok=True)
        (work / "m" / relative).write_bytes(data)
    argv = ["eval", world.suite, "--model", "random", "--out", work / "m", "--force", "--no-progress"]
    ran = run_recworld(*argv, "--limit", "2")
    assert ran.returncode == 0, ran.stderr
    assert {r: (work / "m" / r).read_bytes() for r in mine} == mine


def test_d4_a_forged_marker_list_never_costs_the_user_their_run_files(world: World, work: Path) -> None:
    """A6: a shared suite's marker listed ``notes.txt`` and the run's files; a rebuild deleted them."""
    suite = _fresh_suite(world, work / "c" / "suite")
    marker_path = suite / ".recworld-output.json"
    marker = json.loads(marker_path.read_text())
    run_dir = "runs/random__generate__zero-shot"
    listed = [
        "notes.txt",
        f"{run_dir}/samples.jsonl",
        f"{run_dir}/.samples.journal.jsonl",
        f"{run_dir}/cache.sqlite",
    ]
    marker["files"] += listed
    marker.setdefault("digests", {}).update({name: [0, "0" * 64] for name in listed})
    marker_path.write_text(json.dumps(marker))
    ran = run_recworld("eval", suite, "--model", "random", "--no-progress", "--limit", "2")
    assert ran.returncode == 0, ran.stderr
    (suite / "notes.txt").write_text("mine")
    before = {p: (suite / p).read_bytes() for p in listed if (suite / p).is_file()}
    assert "notes.txt" in before and f"{run_dir}/samples.jsonl" in before
    ran = run_recworld(*_build(world, suite))
    assert ran.returncode == 0, ran.stderr
    assert {p: (suite / p).read_bytes() for p in before} == before


def test_d5_a_crafted_suites_runs_link_never_carries_a_write_outside(world: World, work: Path) -> None:
    """A8: ``runs -> ../outside-dir`` in a crafted suite took the run outside it."""
    crafted = _fresh_suite(world, work / "cr")
    shutil.rmtree(crafted / "runs")
    (work / "out").mkdir()
    (crafted / "runs").symlink_to("../out", target_is_directory=True)
    ran = run_recworld("eval", crafted, "--model", "random", "--no-progress")
    assert (
        ran.returncode == 2
        and "symbolic link inside the recworld output" in ran.stderr
        and _one_line(ran.stderr)
    )
    assert list((work / "out").iterdir()) == []


# -- D6: read-only folders and a full disk, in a forked child (the limits must not reach pytest) ----------


def _in_child(prepare: Callable[[], None], argv: list[object]) -> tuple[int, str]:
    """``recworld ARGV`` in a forked child after ``prepare()``; its exit code and stderr."""
    err_path = Path(os.environ["RECWORLD_HOME"]).with_name("child-stderr.txt")
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 99
        try:
            fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 2)
            import sys

            sys.stderr = os.fdopen(2, "w", buffering=1)
            prepare()
            code = recworld_exit_code(*argv)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), err_path.read_text(errors="replace")


def _drop_file_capabilities() -> None:
    """As ``setpriv --bounding-set -dac_override,...``: root obeys file modes from here on."""
    if os.geteuid() != 0:
        return

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        ]

    libc = ctypes.CDLL(None, use_errno=True)
    header = Header(0x20080522, 0)
    data = (Data * 2)()
    assert libc.capget(ctypes.byref(header), data) == 0
    drop = (1 << 1) | (1 << 2) | (1 << 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
    data[0].effective &= ~drop
    data[0].permitted &= ~drop
    assert libc.capset(ctypes.byref(header), data) == 0


def _read_only(*folders: Path) -> Callable[[], None]:
    def prepare() -> None:
        for folder in folders:
            folder.chmod(0o555)
        _drop_file_capabilities()

    return prepare


@pytest.mark.parametrize("case", ["eval-out", "report", "build", "export", "eval-rerun"])
def test_d6_a_read_only_folder_is_one_line(case: str, world: World, work: Path) -> None:
    """A19-A23: PermissionError tracebacks ("a bug in recworld") from mkdir, mkdtemp, the log file."""
    (work / "ro").mkdir()
    suite = copy(world.suite, work / "rosuite") if case == "report" else _fresh_suite(world, work / "rosuite")
    if case == "eval-rerun":
        ran = run_recworld("eval", suite, "--model", "random", "--no-progress", "--limit", "1")
        assert ran.returncode == 0, ran.stderr
    argv: dict[str, list[object]] = {
        "eval-out": ["eval", suite, "--model", "random", "--out", work / "ro" / "run", "--no-progress"],
        "report": ["report", suite],
        "build": _build(world, work / "ro" / "suite"),
        "export": ["export", suite, "--to", "hf", "--out", work / "ro" / "exp"],
        "eval-rerun": ["eval", suite, "--model", "random", "--no-progress", "--limit", "2"],
    }
    locked = {
        "report": [suite],
        "eval-rerun": [suite / "runs" / "random__generate__zero-shot"],
    }.get(case, [work / "ro"])
    before = snapshot(work)
    code, err = _in_child(_read_only(*locked), argv[case])
    for folder in locked:
        folder.chmod(0o755)
    assert code == 2 and _one_line(err), err
    # Progress lines (issue 27: every long command reports progress when piped) are not errors.
    errors = [line for line in err.strip().splitlines() if not line.startswith("recworld: progress:")]
    assert len(errors) == 1 and "ermission" in err, err
    after = snapshot(work)
    assert [p for p in before if after.get(p) != before[p] and not p.endswith("recworld.log")] == []


def test_d6_a_full_disk_during_a_rebuild_is_one_line_and_the_old_suite_stands(
    world: World, work: Path
) -> None:
    """A24: ``ulimit -f 8`` gave a pyarrow EFBIG traceback (the old suite was intact, and must stay so)."""
    suite = copy(world.suite, work / "suite")
    before = snapshot(suite)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8 * 1024, resource.RLIM_INFINITY))

    code, err = _in_child(limit, [*_build(world, suite), "--seed", "5"])
    assert code == 2 and _one_line(err), err
    assert snapshot(suite) == before
    assert [p.name for p in work.iterdir() if p.name.startswith(".suite.")] == []


def test_d7_long_names_fit_or_are_one_line(world: World, work: Path) -> None:
    """A26-A28: hidden siblings of a 245-byte name, a 300-byte model name: ENAMETOOLONG tracebacks."""
    long = work / ("a" * 245)
    ran = run_recworld(*_build(world, long))
    assert ran.returncode == 0, ran.stderr
    assert sorted(p.name for p in work.iterdir() if p.name.startswith(".")) == []
    ran = run_recworld("export", long, "--to", "hf", "--out", work / ("e" * 245))
    assert ran.returncode == 0, ran.stderr
    ran = run_recworld(*_build(world, work / ("b" * 256)))
    assert ran.returncode == 2 and "over the 255" in ran.stderr and _one_line(ran.stderr)
    model = "openai:" + "m" * 300
    argv = ["eval", long, "--model", model, "--base-url", "http://127.0.0.1:9/v1", "--limit", "1"]
    ran = run_recworld(*argv, "--max-retries", "0", "--no-progress")
    assert _one_line(ran.stderr), ran.stderr
    runs = [p.name for p in (long / "runs").iterdir()]
    assert runs and all(len(name.encode()) <= 255 for name in runs)


@pytest.mark.parametrize("case", ["eval", "build", "dataset"])
def test_d8_a_path_that_is_not_utf8_is_one_line_and_writes_nothing(
    case: str, world: World, work: Path
) -> None:
    """A30-A32: surrogate-escaped paths reached run.json, pyarrow and question rows: UnicodeEncodeError."""
    bad = os.fsdecode(b"bad\xffname")
    data = work / os.fsdecode(b"dbad\xffname")
    shutil.copytree(world.data, data)
    argv: dict[str, list[object]] = {
        "eval": ["eval", world.suite, "--model", "random", "--out", work / bad, "--no-progress"],
        "build": _build(world, work / bad),
        "dataset": ["build", "--dataset", data, "--out", work / "s", *SMALL],
    }
    ran = run_recworld(*argv[case])
    assert ran.returncode == 2 and "not valid UTF-8" in ran.stderr and _one_line(ran.stderr), ran.stderr
    assert not (work / bad).exists() and not (work / "s").exists()


# -- D12: FIFOs in a run folder ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["recworld.log", ".samples.journal.jsonl"])
def test_d12_a_fifo_in_a_run_folder_is_one_line_not_a_hang(name: str, world: World, work: Path) -> None:
    """B1, B3, B4: a FIFO ``recworld.log`` hung eval; a FIFO journal crashed it (UnsupportedOperation)."""
    suite = _fresh_suite(world, work / "f")
    run_dir = suite / "runs" / "random__generate__zero-shot"
    run_dir.mkdir()
    claim = {"kinds": ["eval-run"], "schema": "recworld.claim/1"}
    (run_dir / ".recworld-claim.json").write_text(json.dumps(claim))
    os.mkfifo(run_dir / name)
    with deadline(60):
        ran = run_recworld("eval", suite, "--model", "random", "--no-progress")
    assert ran.returncode == 2 and "FIFO" in ran.stderr, ran.stderr
    assert _one_line(ran.stderr)


# -- D14: one huge line ------------------------------------------------------------------------------------


def _peak_rss_kib(work: Callable[[], int]) -> tuple[int, int]:
    """Run ``work`` in a forked child; its exit code and peak RSS (KiB)."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = work()
        finally:
            os._exit(code)
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss


@pytest.mark.parametrize("header", [False, True])
def test_d14_a_2_gib_line_is_one_bounded_error(header: bool, work: Path, world: World) -> None:
    """B19, B20: a 2 GiB line took 4.4-6.5 GB and ended in a traceback."""
    big = work / "big"
    shutil.copytree(world.data, big)
    ratings = big / "ratings.csv"
    ratings.write_bytes(b"userId,movieId,rating,timestamp\n" if header else b"")
    with ratings.open("r+b") as handle:
        handle.truncate(2 << 30)  # sparse: no disk used
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code, peak = _peak_rss_kib(
        lambda: recworld_exit_code("build", "--dataset", big, "--out", work / "bigs", *SMALL)
    )
    assert code == 2
    assert peak - base < 300_000 or peak < 1_200_000, (base, peak)  # KiB: nowhere near the 2 GiB


# -- D15, D16: zips ----------------------------------------------------------------------------------------


def _bomb(path: Path, size: int = 256 << 20) -> Path:
    data = write_ml_latest_small(
        path.parent / "bomb-src" / "ml-latest-small", users=20, movies=20, ratings=100
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for file in ("movies.csv", "links.csv"):
            zf.write(data / file, f"ml-latest-small/{file}")
        with zf.open("ml-latest-small/ratings.csv", "w", force_zip64=True) as out:
            out.write(b"userId,movieId,rating,timestamp\n")
            chunk = b"0" * (1 << 20)
            for _ in range(size >> 20):
                out.write(chunk)
    return path


def test_d15_a_bomb_in_a_member_the_format_reads_is_refused_before_it_is_written(work: Path) -> None:
    """B21: a 1 MB zip wrote 1.07 GB into ``cache/raw``, crashed, and left it there."""
    archive = _bomb(work / "wanted-bomb.zip")
    assert archive.stat().st_size < 2 << 20
    ran = run_recworld("data", "fetch", "ml-latest-small", "--from", archive)
    assert ran.returncode == 2 and "zip bomb" in ran.stderr and _one_line(ran.stderr), ran.stderr
    home = Path(os.environ["RECWORLD_HOME"])
    assert sum(p.stat().st_size for p in home.rglob("*") if p.is_file()) < 1 << 20


def test_d15_any_failure_after_unpacking_removes_the_unpacked_copy(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """B21's second half: the parse died with ArrowMemoryError (not a RecWorldError) and 1 GiB stayed."""
    from recworld.data import sources

    data = write_ml_latest_small(work / "src" / "ml-latest-small", users=20, movies=20, ratings=100)
    archive = work / "ok.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(data.iterdir()):
            zf.write(file, f"ml-latest-small/{file.name}")

    def boom(*_args: object, **_kwargs: object) -> object:
        raise MemoryError("out of memory in the parser")

    monkeypatch.setattr(sources, "load_uncached", boom)
    with pytest.raises(MemoryError):
        sources.load_source(archive)
    raw = Path(os.environ["RECWORLD_HOME"]) / "cache" / "raw"
    assert not raw.exists() or list(raw.iterdir()) == []


@pytest.mark.parametrize(
    "members",
    [
        ["ml-latest-small/ratings.csv", "ml-latest-small/ratings.csv/ratings.csv"],
        ["ratings.csv", "ratings.csv/ratings.csv"],
        ["x" * 300 + "/ratings.csv"],
    ],
    ids=["file-then-dir", "top-file-then-dir", "longname"],
)
def test_d16_members_whose_folders_cannot_be_made_are_one_line(members: list[str], work: Path) -> None:
    """B22, B23: FileExistsError and ENAMETOOLONG tracebacks from ``mkdir`` before the ``try``."""
    archive = work / "layout.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in members:
            zf.writestr(name, b"userId,movieId,rating,timestamp\n1,1,4.0,1\n")
    ran = run_recworld("data", "fetch", "ml-latest-small", "--from", archive)
    assert ran.returncode == 2 and _one_line(ran.stderr) and "layout.zip" in ran.stderr, ran.stderr
    raw = Path(os.environ["RECWORLD_HOME"]) / "cache" / "raw"
    assert not raw.exists() or list(raw.iterdir()) == []
