"""Secret key files (``recworld.io.keyfile``): whatever lies at the path, a whole key or one error naming it.

The oracle below is written from the module's invariant, not from its code: a key file is
``2n`` hex digits (up to two trailing CR/LF) or ``n`` raw bytes that are not all hex digits;
nothing else is ever read as a key, and no call returns a key of another length.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recworld.errors import ConfigError, DataError
from recworld.io import proof
from recworld.io.keyfile import load_or_make_key
from recworld.lunar.privacy import run_key
from recworld.lunar.privacy.secret import KEY_ENV, KEY_FILE


def expected_key(content: bytes, n: int) -> bytes | None:
    """The key a file holding ``content`` stands for, or None when it holds none (the spec, stated apart)."""
    if re.fullmatch(rb"[0-9a-fA-F]{%d}[\r\n]{0,2}" % (2 * n), content):
        return bytes.fromhex(content[: 2 * n].decode())
    if len(content) == n and not re.fullmatch(rb"[0-9a-fA-F]*", content):
        return content
    return None


HEX = st.text("0123456789abcdefABCDEF", min_size=0, max_size=70).map(str.encode)
CONTENT = st.one_of(
    st.binary(max_size=80),
    HEX,
    st.builds(lambda h, end: h + end, HEX, st.sampled_from([b"", b"\n", b"\r\n", b"\n\n\n", b" "])),
    st.integers(16, 32).flatmap(lambda n: st.binary(min_size=n, max_size=n)),
)
OTHER = st.sampled_from(["missing", "link-to-key", "dangling-link", "directory", "fifo"])
STATE = st.one_of(st.tuples(st.just("file"), CONTENT), st.tuples(OTHER, st.just(b"")))


def place(path: Path, kind: str, content: bytes, n: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        path.write_bytes(content)
    elif kind == "link-to-key":
        good = path.with_name("elsewhere")
        good.write_text("ab" * n)
        path.symlink_to(good)
    elif kind == "dangling-link":
        path.symlink_to(path.with_name("nowhere"))
    elif kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)


def outcome(path: Path, n: int) -> bytes | str:
    try:
        return load_or_make_key(path, n)
    except DataError as exc:
        return str(exc)


@settings(max_examples=150, deadline=None)
@given(state=STATE, n=st.sampled_from([16, 32]))
def test_any_prior_state_gives_a_whole_stable_key_or_one_error_naming_the_file(
    state: tuple[str, bytes], n: int
) -> None:
    kind, content = state
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "private" / "key"
        place(path, kind, content, n)
        first, second = outcome(path, n), outcome(path, n)
        assert first == second  # stable: the same key, or the same error, on every call
        wanted = expected_key(content, n) if kind == "file" else None
        if kind == "missing":
            assert isinstance(first, bytes) and len(first) == n
            assert path.read_text() == first.hex() + "\n"  # written whole, as hex
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
        elif wanted is not None:
            assert first == wanted
        else:
            assert isinstance(first, str) and str(path) in first, first
            assert os.path.lexists(path)  # never replaced: a run's outputs may depend on what was there
        assert [p.name for p in path.parent.iterdir() if p.name.startswith(".key.")] == []


STEPS = ("write", "fsync", "link", "unlink")


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_between_any_two_steps_never_leaves_a_short_key(tmp_path: Path, step: str) -> None:
    """A child killed at each step of making the key (``os._exit``: no cleanup runs) leaves no partial key."""
    path = tmp_path / "keys" / "key"
    pid = os.fork()
    if pid == 0:  # the child: die at the step, as a kill -9 there would
        setattr(os, step, lambda *args, **kwargs: os._exit(9))
        try:
            load_or_make_key(path, 32)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    key = load_or_make_key(path, 32)
    assert len(key) == 32 and load_or_make_key(path, 32) == key
    assert path.read_text() == key.hex() + "\n"
    strays = [p for p in path.parent.iterdir() if p != path]
    assert len(strays) <= 1 and all(p.name.startswith(".key.") for p in strays)


def test_an_unwritable_folder_is_an_error_or_a_key_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    path = blocker / "keys" / "key"
    with pytest.raises(DataError, match=re.escape(str(path))):
        load_or_make_key(path, 32)
    one, two = (load_or_make_key(path, 32, memory_if_unwritable=True) for _ in range(2))
    assert len(one) == len(two) == 32 and one != two  # fresh each time: nothing was kept


def test_the_ownership_key_reads_its_first_raw_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECWORLD_HOME", str(tmp_path))
    raw = b"\x00" * 31 + b"\xff"
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "ownership.key").write_bytes(raw)
    monkeypatch.setattr(proof, "_KEYS", {})
    assert proof.key() == raw


def test_a_lunar_run_key_is_made_once_and_a_damaged_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    key = run_key(tmp_path / "run")
    assert len(key) == 32 and run_key(tmp_path / "run") == key
    (tmp_path / "cut" / KEY_FILE).parent.mkdir(parents=True)
    (tmp_path / "cut" / KEY_FILE).write_text("")  # what a kill of the old writer left
    with pytest.raises(DataError, match=re.escape(str(tmp_path / "cut" / KEY_FILE))):
        run_key(tmp_path / "cut")


@pytest.mark.parametrize("value", ["00", "zz" * 32, "ab" * 15])
def test_a_short_or_non_hex_environment_key_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(KEY_ENV, value)
    with pytest.raises(ConfigError, match=KEY_ENV):
        run_key(None)
    monkeypatch.setenv(KEY_ENV, "5e" * 16)
    assert run_key(None) == b"\x5e" * 16
