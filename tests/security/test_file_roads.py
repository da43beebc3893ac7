"""One road per file job: the streamed hash, the image reference test and read, the stamped join.

Every caller hashes a file with ``capped.sha256_file``, tells a URL from a path with
``capped.is_remote`` and reads a local image with ``capped.read_image``; packaged models are
joined by ``io.stamp.assemble_once``. Each is checked here against an oracle that shares none
of its code (``hashlib`` over the bytes, a list of references, the bytes a join must give).
"""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recworld import capped
from recworld.capped import RefusedFileError, is_remote, read_image, sha256_file
from recworld.chat import Message, Request
from recworld.errors import ConfigError, DataError
from recworld.io import fault_hook
from recworld.io.stamp import assemble_once, stamp_path
from recworld.models.openai_compat import image_url

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=5000), chunk=st.integers(1, 300))
def test_the_streamed_hash_is_the_hash_of_the_bytes(data: bytes, chunk: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f"
        path.write_bytes(data)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(capped, "_HASH_CHUNK", chunk)
            assert sha256_file(path) == hashlib.sha256(data).hexdigest()


def test_the_hash_refuses_what_is_no_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")  # read to its end this would hang
    (tmp_path / "real").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    for path in (tmp_path / "fifo", tmp_path, tmp_path / "absent"):
        with pytest.raises(DataError, match=str(path)):
            sha256_file(path)
    with pytest.raises(DataError, match="symbolic link"):
        sha256_file(tmp_path / "link", follow=False)
    assert sha256_file(tmp_path / "link") == hashlib.sha256(b"x").hexdigest()


REMOTE = ["http://x/a.png", "https://x/a.png", "data:image/png;base64,AAAA", "s3://bucket/a.png", "ftp://h/f"]
LOCAL = ["/abs/a.png", "rel/a.png", "a.png", "~/a.png", "C:\\posters\\a.png", "./a:b.png", "1http://x"]


@pytest.mark.parametrize("reference", REMOTE + LOCAL)
def test_every_caller_tells_a_url_from_a_file_the_same_way(reference: str, tmp_path: Path) -> None:
    remote = reference in REMOTE
    assert is_remote(reference) is remote
    key = Request((Message("user", "q", images=(reference,)),)).cache_payload()["messages"][0]["images"][0]
    assert key == reference  # a URL names itself; an unreadable file is left to the backend
    if remote:
        assert image_url(reference) == reference
    else:
        with pytest.raises(ConfigError, match="cannot read image"):
            image_url(reference)


def test_a_local_image_is_keyed_by_its_bytes_and_sent_as_its_format(tmp_path: Path) -> None:
    path = tmp_path / "poster.jpg"  # the name says JPEG; the bytes say PNG
    path.write_bytes(PNG)
    request = Request((Message("user", "q", images=(str(path),)),))
    key = request.cache_payload()["messages"][0]["images"][0]
    assert key == "sha256:" + hashlib.sha256(PNG).hexdigest()
    assert image_url(str(path)) == "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_no_caller_sends_a_file_that_is_no_image_or_too_large(tmp_path: Path) -> None:
    secret = tmp_path / "passwords.png"
    secret.write_text("root:hunter2\n")
    big = tmp_path / "big.png"
    big.write_bytes(PNG + b"\0" * 100)
    for path, reason in ((secret, "not an image"), (big, "too large"), (tmp_path, "not a regular file")):
        with pytest.raises(RefusedFileError, match=reason) as info:
            read_image(path, limit=64)
        assert info.value.reason == reason and info.value.path == path
    for path, reason in ((secret, "not an image"), (tmp_path, "not a regular file")):
        with pytest.raises(ConfigError, match=reason):
            image_url(str(path))


# -- the stamped join ------------------------------------------------------------------------------

PARTS = (b"GGUF" + bytes(range(256)), b"", b"middle" * 50, b"tail")
JOINED = b"".join(PARTS)
SHA = hashlib.sha256(JOINED).hexdigest()

TARGET_STATES = ["missing", "good", "same size other bytes", "truncated", "link to good", "directory"]
STAMP_STATES = ["missing", "good", "wrong hash", "wrong size", "hash only", "garbage", "directory", "link"]


def parts_in(folder: Path) -> list[Path]:
    paths = []
    for i, data in enumerate(PARTS):
        path = folder / f"part{i}"
        path.write_bytes(data)
        paths.append(path)
    return paths


def place_target(target: Path, state: str) -> None:
    good = target.with_name("good-copy")
    good.write_bytes(JOINED)
    if state == "good":
        target.write_bytes(JOINED)
    elif state == "same size other bytes":
        target.write_bytes(bytes(len(JOINED)))
    elif state == "truncated":
        target.write_bytes(JOINED[:-1])
    elif state == "link to good":
        target.symlink_to(good)
    elif state == "directory":
        target.mkdir()


def place_stamp(stamp: Path, state: str) -> None:
    text = {
        "good": f"{SHA} {len(JOINED)}\n",
        "wrong hash": f"{'0' * 64} {len(JOINED)}\n",
        "wrong size": f"{SHA} {len(JOINED) + 1}\n",
        "hash only": f"{SHA}\n",
        "garbage": "\xff not a stamp",
    }.get(state)
    if text is not None:
        stamp.write_text(text, encoding="utf-8", errors="surrogateescape")
    elif state == "directory":
        stamp.mkdir()
    elif state == "link":
        stamp.with_name("stamp-copy").write_text(f"{SHA} {len(JOINED)}\n")
        stamp.symlink_to(stamp.with_name("stamp-copy"))


@settings(max_examples=60, deadline=None)
@given(target_state=st.sampled_from(TARGET_STATES), stamp_state=st.sampled_from(STAMP_STATES))
def test_any_prior_state_gives_the_verified_join_or_one_error(target_state: str, stamp_state: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "parts").mkdir()
        sources = parts_in(root / "parts")
        target = root / "models" / "m.gguf"
        target.parent.mkdir()
        place_target(target, target_state)
        place_stamp(stamp_path(target), stamp_state)
        vouched = stamp_state == "good" and target_state in {"good", "same size other bytes"}
        try:
            out = assemble_once(target, SHA, lambda: sources, size=len(JOINED))
        except DataError as exc:
            assert target_state == "directory" or stamp_state == "directory", exc
            assert str(target) in str(exc) or str(stamp_path(target)) in str(exc)
            return
        assert out == target and not target.is_symlink()
        if vouched:  # the stamp vouches for a regular file of its size: reused without a rehash
            assert target.stat().st_size == len(JOINED)
        else:
            assert target.read_bytes() == JOINED
            assert stamp_path(target).read_text() == f"{SHA} {len(JOINED)}\n"
        assert assemble_once(target, SHA, list, size=len(JOINED)) == target  # no sources needed now
        assert sorted(p.name for p in target.parent.iterdir() if p.name.startswith(".")) == []


POINTS = [("m.gguf", "file.staged"), ("m.gguf", "file.replaced"), ("m.gguf.sha256", "file.staged")]


@pytest.mark.parametrize(("name", "point"), POINTS)
def test_a_kill_at_any_step_of_a_join_is_joined_again_and_leaves_nothing(
    tmp_path: Path, name: str, point: str
) -> None:
    sources = parts_in(tmp_path)
    target = tmp_path / "models" / "m.gguf"

    def die(at: str, path: Path) -> None:
        if at == point and path.name == name:
            os._exit(9)

    pid = os.fork()
    if pid == 0:
        try:
            with fault_hook(die):
                assemble_once(target, SHA, lambda: sources, size=len(JOINED))
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    assert not stamp_path(target).exists()  # a stamp only ever follows its file
    assert assemble_once(target, SHA, lambda: sources, size=len(JOINED)).read_bytes() == JOINED
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf", "m.gguf.sha256"]


def test_a_join_of_other_bytes_keeps_the_old_file_and_leaves_no_stamp(tmp_path: Path) -> None:
    sources = parts_in(tmp_path)
    target = tmp_path / "m.gguf"
    target.write_bytes(b"old")
    with pytest.raises(DataError, match="is not the expected"):
        assemble_once(target, "1" * 64, lambda: sources)
    with pytest.raises(DataError, match="expected 3"):
        assemble_once(target, SHA, lambda: sources, size=3)
    assert target.read_bytes() == b"old" and not stamp_path(target).exists()


def test_a_model_file_fingerprint_is_its_first_mib_and_a_fifo_is_refused(tmp_path: Path) -> None:
    from recworld.models._common import file_fingerprint

    weights = tmp_path / "model.bin"
    data = bytes(range(256)) * 5000  # over a MiB: only the first is hashed
    weights.write_bytes(data)
    assert file_fingerprint(weights) == hashlib.sha256(data[: 1 << 20]).hexdigest()
    os.mkfifo(tmp_path / "fifo.bin")  # opened with a plain open() this blocked forever
    raised: list[BaseException] = []

    def fingerprint_fifo() -> None:
        try:
            file_fingerprint(tmp_path / "fifo.bin")
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=fingerprint_fifo, daemon=True)  # a hang fails the case, not the suite
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "fingerprinting a FIFO hung"
    assert len(raised) == 1 and isinstance(raised[0], DataError) and "FIFO" in str(raised[0])
