"""What recworld wrote earlier is untrusted when read back (issue 23 items 1-2; review 3 D1-D4, D12).

Each property plants a folder state drawn by hypothesis (forged journals,
sibling names in every form recworld generates, symlinks, FIFOs, user files
with look-alike names at any depth, forged marker lists), lets recworld act on
it, and checks the result with :func:`disk_states.snapshot`, which reads the
tree with ``os`` alone:

* recovery and a swap never remove, move or change an entry recworld did not
  make: every user entry is where it was, byte for byte, outside the output and
  (carried) inside it;
* ``--force`` and the temporary sweep keep every file they did not write, at
  every depth, and still remove what a killed writer of this user left;
* a forged marker list never makes a rebuild drop a user's file, while the
  writer's own stale files still go;
* every reader of a run folder's files refuses a FIFO, socket, device or
  directory in one ``DataError``, and never hangs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.security.disk_states import (
    KINDS,
    LOOKALIKES,
    NAME,
    USER_NAMES,
    deadline,
    hexes,
    identity_of,
    lost,
    plant,
    snapshot,
)
from recworld.errors import ConfigError, DataError
from recworld.io import (
    Journal,
    atomic_directory,
    atomic_write_text,
    check_output_dir,
    claim_output_dir,
    open_append,
    output_directory,
    read_json_object,
    recover,
)
from recworld.io.marker import OUTPUT_MARKER, claimed_kinds, read_marker
from recworld.io.proof import temporary_name

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RAN: dict[str, int] = {}  # examples each property ran (printed by the last test, for the closing note)


def _count(name: str) -> None:
    RAN[name] = RAN.get(name, 0) + 1


def _no_fsync(_fd: int) -> None:
    return None


class _Scratch:
    """A fresh root per example: ``outside/`` (a user's folder links point at) and ``parent/``."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="rw-disk-")
        self.root = Path(self._dir.name)
        self.outside = self.root / "outside"
        self.outside.mkdir()
        (self.outside / "tax-return.pdf").write_bytes(b"precious\n")
        self.parent = self.root / "parent"
        self.parent.mkdir()
        self.target = self.parent / NAME
        self.old_home = os.environ.get("RECWORLD_HOME")
        os.environ["RECWORLD_HOME"] = str(self.root / "home")
        self._fsync = os.fsync
        os.fsync = _no_fsync  # durability is not what these check; an fsync costs 5 ms here

    def close(self) -> None:
        os.fsync = self._fsync
        if self.old_home is None:
            os.environ.pop("RECWORLD_HOME", None)
        else:
            os.environ["RECWORLD_HOME"] = self.old_home
        for folder, dirs, _files in os.walk(self.root):  # a test may leave a folder read-only
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)
        self._dir.cleanup()


def _journal(data: st.DataObject, scratch: _Scratch, siblings: list[str]) -> object:
    """A planted ``.suite.swap.json``: forged fields pointing anywhere, or not a file at all."""
    form = data.draw(
        st.sampled_from(["fields", "fields", "fields", "fifo", "dir", "link", "garbage", "huge"])
    )
    if form != "fields":
        return form
    refs = ["..", ".", "../outside", str(scratch.outside), "victim", NAME, "", *siblings]
    ident_choices = [scratch.outside, scratch.parent, *(scratch.parent / s for s in siblings)]
    if scratch.target.exists():
        ident_choices.append(scratch.target)

    def ident() -> list[int]:
        real = data.draw(st.sampled_from(ident_choices))
        if os.path.lexists(real) and data.draw(st.booleans()):
            return identity_of(real)  # an attacker can stat the folders it names
        return [data.draw(st.integers(0, 2**40)), data.draw(st.integers(0, 2**40))]

    return {
        "schema": data.draw(st.sampled_from(["recworld.swap/1", "recworld.swap/2"])),
        "staging": data.draw(st.sampled_from(refs)),
        "trash": data.draw(st.sampled_from(refs)),
        "new": ident(),
        "old": None if data.draw(st.booleans()) else ident(),
        "carry": data.draw(st.booleans()),
        "seal": data.draw(st.one_of(hexes(64), st.just(""))),
    }


def _plant_journal(scratch: _Scratch, journal: object) -> None:
    path = scratch.parent / f".{NAME}.swap.json"
    if isinstance(journal, dict):
        path.write_text(json.dumps(journal))
    elif journal == "fifo":
        os.mkfifo(path)
    elif journal == "dir":
        path.mkdir()
    elif journal == "link":
        path.symlink_to(scratch.outside / "tax-return.pdf")
    elif journal == "garbage":
        path.write_bytes(b'{"schema": "recworld.swap/2", "staging": "..", \xff')
    elif journal == "huge":
        path.write_bytes(b'{"pad": "' + b"x" * (1 << 17) + b'"}')


WRITES = {"manifest.json", "questions", "questions/q.jsonl"}


@PROPERTY
@given(data=st.data())
def test_recovery_and_swaps_never_touch_what_recworld_did_not_make(data: st.DataObject) -> None:
    """Invariant of :mod:`recworld.io.swap`: only sealed siblings and sealed journals are acted on."""
    _count("recovery")
    scratch = _Scratch()
    try:
        siblings = data.draw(st.dictionaries(LOOKALIKES, KINDS, max_size=5), label="siblings")
        for name, kind in siblings.items():
            plant(scratch.parent / name, kind, scratch.outside)
        old_target = data.draw(st.sampled_from(["none", "user-files", "deep"]), label="target")
        if old_target != "none":
            plant(
                scratch.target,
                "dir" if old_target == "user-files" else "deep",
                scratch.outside,
                b"in target\n",
            )
        journal = _journal(data, scratch, list(siblings))
        _plant_journal(scratch, journal)
        before = snapshot(scratch.root)
        action = data.draw(st.sampled_from(["recover", "swap", "check"]), label="action")
        with deadline():
            if action == "recover":
                recover(scratch.target)
            elif action == "check":
                check_output_dir(scratch.target, "lrworld-suite", force=True)
            else:
                try:
                    with atomic_directory(scratch.target, carry=True) as staging:
                        atomic_write_text(staging / "manifest.json", "{}")
                        atomic_write_text(staging / "questions" / "q.jsonl", "")
                except (DataError, ConfigError):
                    pass  # refused (a planted file in the way): then nothing may have changed
        after = snapshot(scratch.root)
        written = {f"parent/{NAME}/{w}" for w in WRITES}
        assert lost(before, after, skip=written) == []
    finally:
        scratch.close()


@PROPERTY
@given(
    files=st.dictionaries(
        st.lists(USER_NAMES, min_size=1, max_size=4).map("/".join),
        st.binary(max_size=40),
        max_size=6,
    ),
    killed=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(["run.json", "samples.jsonl", "x"])), max_size=3
    ),
    how=st.sampled_from(["claim-force", "check-force"]),
)
def test_force_and_the_sweep_keep_every_file_they_did_not_write(
    files: dict[str, bytes], killed: list[tuple[int, str]], how: str
) -> None:
    """Invariant of :mod:`recworld.io.files`: only sealed temporaries of this user are swept, at any depth."""
    _count("force")
    scratch = _Scratch()
    try:
        out = scratch.target
        out.mkdir()
        for relative, content in files.items():
            path = out / relative
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
            except (FileExistsError, NotADirectoryError, IsADirectoryError):
                continue  # one drawn path is a file where another needs a folder
        ours = []
        for depth, base in killed:  # what a killed writer of this user left: these may go
            folder = out.joinpath(*["sub"] * depth)
            folder.mkdir(parents=True, exist_ok=True)
            temp = folder / temporary_name(folder, base)
            temp.write_bytes(b"half")
            ours.append(temp)
        before = snapshot(scratch.root)
        with deadline():
            if how == "claim-force":
                claim_output_dir(out, "eval-run", force=True)
            else:
                check_output_dir(out, "eval-run", force=True)
        after = snapshot(scratch.root)
        skip = {f"parent/{NAME}/{p.relative_to(out).as_posix()}" for p in ours}
        assert lost(before, after, skip=skip) == []
        if how != "check-force":
            assert [p for p in ours if p.exists()] == []  # the sweep still works
    finally:
        scratch.close()


HOSTILE_PATHS = st.one_of(
    st.sampled_from(
        ["../outside/tax-return.pdf", "/etc/passwd", "a/../../x", "", ".", "./notes.txt", "notes.txt/"]
    ),
    st.lists(USER_NAMES, min_size=1, max_size=3).map("/".join),
)


@PROPERTY
@given(
    writes=st.sets(
        st.sampled_from(["manifest.json", "questions/a.jsonl", "questions/b.jsonl", "dataset/d.parquet"]),
        min_size=1,
    ),
    rewrites=st.sets(
        st.sampled_from(["manifest.json", "questions/a.jsonl", "questions/b.jsonl", "dataset/d.parquet"]),
        min_size=1,
    ),
    user=st.dictionaries(
        st.lists(USER_NAMES, min_size=1, max_size=3).map("/".join),
        st.binary(max_size=20),
        max_size=4,
    ),
    forged=st.lists(
        st.tuples(HOSTILE_PATHS, st.sampled_from(["random", "other-file", "other-size"])), max_size=5
    ),
    listed_by_name=st.booleans(),
)
def test_a_forged_marker_list_never_drops_a_users_file(
    writes: set[str],
    rewrites: set[str],
    user: dict[str, bytes],
    forged: list[tuple[str, str]],
    listed_by_name: bool,
) -> None:
    """Invariant of :mod:`recworld.io.carry`: a file is the writer's only while its bytes still match."""
    _count("marker")
    scratch = _Scratch()
    try:
        out = scratch.target
        with output_directory(out, "lrworld-suite") as staging:
            for relative in sorted(writes):
                atomic_write_text(staging / relative, f"v1 {relative}")
        marker_path = out / OUTPUT_MARKER
        marker = json.loads(marker_path.read_text())
        recorded = marker["digests"]
        some = next(iter(recorded.values()))
        for relative, how in forged:  # the crafter writes the list before the user's files exist
            value = {"random": [5, "0" * 64], "other-file": some}.get(how)
            recorded[relative] = value if value is not None else [some[0] + 1, some[1]]
            marker["files"].append(relative)
        marker_path.write_text(json.dumps(marker))
        for relative, content in user.items():
            path = out / relative
            if relative in writes | rewrites or any(relative.startswith(w + "/") for w in writes | rewrites):
                continue
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
            except (FileExistsError, NotADirectoryError, IsADirectoryError):
                continue
            if listed_by_name:  # listed by name with the digest of other bytes (what a crafter can give)
                recorded[relative] = [len(content), hashlib.sha256(content + b"-").hexdigest()]
                marker_path.write_text(json.dumps(marker))
        before = snapshot(scratch.root)
        with deadline():
            try:
                with output_directory(out, "lrworld-suite") as staging:
                    for relative in sorted(rewrites):
                        atomic_write_text(staging / relative, f"v2 {relative}")
            except ConfigError:
                return  # a user's folder in the way of a file the build writes: refused, nothing changed
        after = snapshot(scratch.root)
        written = {f"parent/{NAME}/{w}" for w in writes | rewrites} | {f"parent/{NAME}/{OUTPUT_MARKER}"}
        written |= {f"parent/{NAME}/{w.split('/')[0]}" for w in writes | rewrites if "/" in w}
        assert lost(before, after, skip=written) == []
        for stale in writes - rewrites:  # the writer's own stale files still go
            assert not (out / stale).exists(), stale
    finally:
        scratch.close()


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()


def _plant_read(path: Path, kind: str, outside: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        _socket(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "link-fifo":
        os.mkfifo(outside / "pipe")
        path.symlink_to(outside / "pipe")
    elif kind == "link-device":
        path.symlink_to("/dev/zero")
    elif kind == "device-link-null":
        path.symlink_to("/dev/null")
    elif kind == "good":
        path.write_text('{"key": "a", "kinds": ["eval-run"], "schema": "recworld.claim/1"}\n')


READERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "journal-load": (".samples.journal.jsonl", lambda p: Journal(p, "key").load()),
    "journal-append": (".samples.journal.jsonl", lambda p: Journal(p, "key").append({"key": "b"})),
    "log-append": ("recworld.log", lambda p: os.close(open_append(p))),
    "marker": (OUTPUT_MARKER, lambda p: read_marker(p.parent)),
    "claim": (".recworld-claim.json", lambda p: claimed_kinds(p.parent)),
    "run-json": ("run.json", read_json_object),
    "swap-journal": (f".{NAME}.swap.json", lambda p: recover(p.parent / NAME)),
}


@PROPERTY
@given(
    reader=st.sampled_from(sorted(READERS)),
    kind=st.sampled_from(["fifo", "socket", "dir", "link-fifo", "link-device", "device-link-null", "good"]),
    depth=st.integers(0, 2),
)
def test_every_reader_of_a_run_folder_refuses_what_is_not_a_regular_file(
    reader: str, kind: str, depth: int
) -> None:
    """Invariant of :mod:`recworld.capped`: a FIFO, socket, device or folder is one DataError, no hang."""
    _count("typed-reads")
    scratch = _Scratch()
    try:
        name, call = READERS[reader]
        folder = scratch.parent.joinpath(*["run"] * depth)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        _plant_read(path, kind, scratch.outside)
        with deadline(5):
            try:
                call(path)
            except (DataError, ConfigError) as exc:
                assert "\n" not in str(exc)
                assert kind != "good", exc
    finally:
        scratch.close()


@settings(max_examples=80, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 200), min_size=0, max_size=30),
    final_newline=st.booleans(),
    chunk=st.integers(1, 300),
    limit=st.integers(1, 150),
    upto=st.integers(0, 6000),
)
def test_a_line_over_the_cap_is_named_by_number_in_bounded_reads(
    lengths: list[int], final_newline: bool, chunk: int, limit: int, upto: int
) -> None:
    """:func:`recworld.capped.check_line_lengths` and ``iter_lines`` name the first line over the cap.

    Reading only the first ``upto`` bytes, the scan names it when those bytes hold more than
    ``limit`` of it, and never names a line that is within the cap.
    """
    from recworld.capped import check_line_lengths, iter_lines, open_regular

    _count("line-cap")
    body = b"\n".join(b"x" * n for n in lengths) + (b"\n" if final_newline and lengths else b"")
    expected = next((i + 1 for i, n in enumerate(lengths) if n > limit), None)
    starts = [sum(lengths[:i]) + i for i in range(len(lengths))]  # each line's first byte
    seen = expected is not None and starts[expected - 1] + limit + 1 <= upto
    with tempfile.NamedTemporaryFile(prefix="rw-lines-") as handle:
        handle.write(body)
        handle.flush()
        path = Path(handle.name)
        for check in ("scan", "head", "iter"):
            try:
                if check == "head":
                    check_line_lengths(path, limit=limit, chunk=chunk, upto=upto)
                elif check == "scan":
                    check_line_lengths(path, limit=limit, chunk=chunk)
                else:
                    with open_regular(path) as source:
                        # iter_lines counts the newline in a line's length
                        for _ in iter_lines(source, path, limit=limit + 1):
                            pass
            except DataError as exc:
                assert exc.line == expected and (check != "head" or seen), (check, exc.line, expected)
            else:
                assert (not seen) if check == "head" else expected is None, check


@pytest.mark.parametrize(
    "name", [".suite.old-v1", ".suite.abcdefgh.partial", ".suite.old-0123456789abcdef0123456789ab"]
)
def test_d2_a_users_folder_named_like_trash_or_staging_is_never_merged_or_deleted(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review 3 D2 (A4): ``.suite.old-v1/`` beside a rebuilt suite vanished into it."""
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path / "home"))
    mine = tmp_path / name
    plant(mine, "deep", tmp_path)
    before = snapshot(mine)
    with output_directory(tmp_path / "suite", "lrworld-suite") as staging:
        atomic_write_text(staging / "manifest.json", "{}")
    with output_directory(tmp_path / "suite", "lrworld-suite") as staging:
        atomic_write_text(staging / "manifest.json", "{}")
    assert snapshot(mine) == before
    assert not (tmp_path / "suite" / "runs").exists()


MUTATIONS = st.sampled_from(["none", "staging", "trash", "new", "old", "carry", "seal", "moved", "added"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    point=st.sampled_from(["swap.journaled", "swap.old-moved", "swap.placed"]),
    exchange=st.booleans(),
    mutation=MUTATIONS,
)
def test_a_real_journal_edited_in_any_field_is_ignored_and_an_intact_one_is_finished(
    point: str, exchange: bool, mutation: str
) -> None:
    """A journal a kill left: intact, recovery finishes the swap; edited, nothing it names is touched."""
    from helpers.security.kills import KILLED, killed_at
    from recworld.io import swap

    _count("real-journals")
    scratch = _Scratch()
    try:
        out = scratch.target
        with output_directory(out, "lrworld-suite") as staging:
            atomic_write_text(staging / "manifest.json", "v1")
        (out / "notes.txt").write_text("mine")

        def rebuild() -> int:
            swap.USE_EXCHANGE = exchange
            with output_directory(out, "lrworld-suite") as staging:
                atomic_write_text(staging / "manifest.json", "v2")
            return 0

        if point == "swap.old-moved" and exchange:
            point = "swap.placed"  # one step: no old-moved passage
        assert killed_at(point, 1, rebuild) == KILLED
        journal = scratch.parent / f".{NAME}.swap.json"
        record = json.loads(journal.read_text())
        ours = {record["staging"], record.get("trash", "")} - {""}  # sealed folders: recworld's own
        if mutation == "moved":  # a genuine journal copied beside another output
            other = scratch.root / "elsewhere"
            shutil.copytree(scratch.parent, other, symlinks=True)
            scratch.parent, scratch.target = other, other / NAME
        elif mutation != "none":
            edits: dict[str, object] = {
                # one character of the staging name, always changed (a "0" stays a "0" otherwise)
                "staging": record["staging"][:-9]
                + ("0" if record["staging"][-9] != "0" else "1")
                + record["staging"][-8:],
                "trash": "..",
                "new": [record["new"][0], record["new"][1] + 1],
                "old": None if record["old"] else [1, 2],
                "carry": not record["carry"],
                "seal": ("0" if record["seal"][0] != "0" else "1") + record["seal"][1:],
                "added": record | {"extra": 1},
            }
            record = edits["added"] if mutation == "added" else record | {mutation: edits[mutation]}
            journal.write_text(json.dumps(record))
        before = snapshot(scratch.parent)
        with deadline():
            recover(scratch.target)
        after = snapshot(scratch.parent)
        if mutation == "none":  # finished: the new output in place, the user's notes kept, no litter
            assert (scratch.target / "manifest.json").read_text() == "v2"
            assert (scratch.target / "notes.txt").read_text() == "mine"
            assert not journal.exists() and not any(
                n.startswith(f".{NAME}.") for n in os.listdir(scratch.parent)
            )
        else:
            tops = {p.split("/")[0] for p in before}
            skip = {p for p in before if p.split("/")[0] in ours}
            assert lost(before, after, skip=skip) == [], sorted(tops)
            assert (scratch.parent / f".{NAME}.swap.json").exists()  # ignored, never deleted
    finally:
        swap.USE_EXCHANGE = True
        scratch.close()


def test_zz_report_examples_run() -> None:
    """Not a check: prints how many examples each property ran (the issue's closing note asks)."""
    print("examples run:", json.dumps(RAN, sort_keys=True))
