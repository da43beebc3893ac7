"""A dataset cannot send a local file to a model server: roots, signatures, size caps, bomb guard.

Each test puts hostile ``image`` references into a dataset (through a metadata
file, as a downloaded dataset would) and runs ``describe-images`` against a
fake server that records every request. Only the one real image inside the
allowed folders may arrive; every other file is skipped, counted, and never
opened (a spy watches the one function that opens image files).
"""

from __future__ import annotations

import base64
import hashlib
import struct
import zlib
from pathlib import Path

import pandas as pd
import pytest

from helpers.cli import run_recworld
from helpers.multimodal import PNG_PREFIX, draw_poster, make_dataset
from recworld import capped
from recworld.data.dataset import Dataset
from recworld.data.image_refs import ImageRoots, RefusedImageError, check_image
from recworld.data.metadata import apply_metadata
from recworld.testing.fake_server import FakeOpenAIServer

DEEP_PASSWD = "../" * 30 + "etc/passwd"


def bomb_png(path: Path, width: int = 100_000, height: int = 100_000) -> Path:
    """A tiny, valid-looking PNG whose header declares ``width`` x ``height`` pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )
    return path


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every path the image checks open."""
    seen: list[Path] = []
    real = capped._open_image

    def spy(path: Path):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(path)

    monkeypatch.setattr(capped, "_open_image", spy)
    return seen


def hostile_cache(tmp_path: Path) -> tuple[Path, Path, dict[str, Path]]:
    """A dataset cache whose posters come from ``raw/meta.csv``; returns (cache, raw folder, files)."""
    raw = tmp_path / "raw"
    base = make_dataset(tmp_path / "unused", n_items=8, n_users=4)
    good = draw_poster(raw / "good.png", 1)
    secret = draw_poster(tmp_path / "private" / "secret.png", 2)  # a real image, outside the roots
    (raw / "linked.png").symlink_to(secret)
    (raw / "fake.jpg").write_text("name,password\nroot,hunter2\n")
    bomb_png(raw / "bomb.png")
    big = draw_poster(raw / "big.png", 3)
    files = {"good": good, "secret": secret, "fake": raw / "fake.jpg", "bomb": raw / "bomb.png", "big": big}
    posters = {
        "m00": "good.png",
        "m01": DEEP_PASSWD,
        "m02": "../private/secret.png",
        "m03": "linked.png",
        "m04": "fake.jpg",
        "m05": "bomb.png",
        "m06": "big.png",
        "m07": str(secret),  # absolute, outside
    }
    meta = raw / "meta.csv"
    meta.write_text("item_id,poster\n" + "".join(f"{k},{v}\n" for k, v in posters.items()))
    items = base.items.drop(columns=["image"])
    dataset = apply_metadata(Dataset.from_frames("toy", "movie", base.interactions, items), meta)
    return Path(dataset.save(tmp_path / "cache")), raw, files


def test_describe_sends_only_the_real_image_inside_the_roots(
    tmp_path: Path,
    fake_vlm: FakeOpenAIServer,
    opened: list[Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache, raw, files = hostile_cache(tmp_path)
    monkeypatch.setattr(capped, "IMAGE_LIMIT", files["big"].stat().st_size - 1)
    assert files["good"].stat().st_size < files["big"].stat().st_size
    argv = ["describe-images", "--dataset", str(cache), "--model", "openai:llava-test", "--no-progress"]
    ran = run_recworld(*argv, "--base-url", fake_vlm.url, "--image-root", str(raw))
    assert ran.returncode == 0, ran.stderr

    # Exactly one request, carrying exactly the good poster's bytes.
    (body,) = fake_vlm.chat
    (_, image) = body["messages"][0]["content"]
    sent = base64.b64decode(image["image_url"]["url"].removeprefix(PNG_PREFIX))
    assert sent == files["good"].read_bytes()

    # Files outside the roots, the link out, and the oversized one are never opened.
    resolved = {p.resolve() for p in opened}
    assert files["secret"].resolve() not in resolved
    assert Path("/etc/passwd") not in resolved and files["big"].resolve() not in resolved
    err = ran.stderr
    assert "7 item images skipped" in err
    for reason in ("4 outside the image roots", "1 not an image", "1 too large", "1 too many pixels"):
        assert reason in err, reason
    described = Dataset.load(tmp_path / "cache-described").items.set_index("item_id")["image_description"]
    assert described.notna().sum() == 1 and described["m00"].startswith("image ")


def test_without_image_root_nothing_outside_the_dataset_folder_is_read(
    tmp_path: Path,
    fake_vlm: FakeOpenAIServer,
    opened: list[Path],
) -> None:
    cache, _, _ = hostile_cache(tmp_path)
    argv = ["describe-images", "--dataset", str(cache), "--model", "openai:llava-test", "--no-progress"]
    ran = run_recworld(*argv, "--base-url", fake_vlm.url)
    assert ran.returncode == 3
    assert fake_vlm.chat == [] and opened == []
    err = ran.stderr.strip()
    assert len(err.splitlines()) == 1 and "every local image was refused" in err
    assert not (tmp_path / "cache-described").exists()


def test_a_missing_image_root_is_an_option_error(tmp_path: Path) -> None:
    cache, _, _ = hostile_cache(tmp_path)
    argv = ["describe-images", "--dataset", str(cache), "--model", "scripted", "--no-progress"]
    ran = run_recworld(*argv, "--image-root", str(tmp_path / "nope"))
    assert ran.returncode == 2
    assert "--image-root" in ran.stderr


@pytest.mark.parametrize(
    ("name", "reason"),
    [("fake", "not an image"), ("bomb", "too many pixels"), ("secret", "outside the image roots")],
)
def test_check_image_names_the_reason(tmp_path: Path, name: str, reason: str) -> None:
    _, raw, files = hostile_cache(tmp_path)
    with pytest.raises(RefusedImageError, match=reason) as info:
        check_image(str(files[name]), ImageRoots.of([raw]))
    assert info.value.reason == reason and info.value.exit_code == 2


def test_a_bomb_under_the_pixel_cap_of_pillow_is_refused_too(tmp_path: Path) -> None:
    # 50 Mpx: above our cap, below Pillow's own error threshold.
    bomb = bomb_png(tmp_path / "wide.png", 10_000, 5_000)
    with pytest.raises(RefusedImageError, match="too many pixels"):
        check_image(str(bomb), ImageRoots.of([tmp_path]))


def test_a_valid_image_inside_the_root_passes(tmp_path: Path) -> None:
    poster = draw_poster(tmp_path / "p" / "ok.png", 4)
    image = check_image("ok.png", ImageRoots.of([tmp_path]), tmp_path / "p")
    assert image.path == poster.resolve() and image.format == "PNG"
    assert image.sha256 == hashlib.sha256(poster.read_bytes()).hexdigest()


def test_the_eval_variant_refuses_an_escaping_image(tmp_path: Path) -> None:
    from recworld.lrworld import BuildConfig, build_suite
    from recworld.lrworld.image_variant import suite_images

    dataset = make_dataset(tmp_path, n_items=30, n_users=20)
    items = dataset.items.copy()
    items["image_description"] = [f"Poster {i}" for i in range(30)]
    items.loc[items["item_id"] == "m03", "image"] = DEEP_PASSWD
    hostile = Dataset.from_frames("toy", "movie", dataset.interactions, pd.DataFrame(items))
    manifest = build_suite(
        hostile,
        BuildConfig(measures=("mm_poster",), per_measure=4),
        tmp_path / "suite",
        image_roots=ImageRoots.of([tmp_path / "posters"]),
    )
    assert manifest.images.refused == {"outside the image roots": 1}
    assert manifest.images.roots == [str((tmp_path / "posters").resolve())]
    with pytest.raises(RefusedImageError, match=r"outside the image roots.*--image-root"):
        suite_images(tmp_path / "suite")["m00"]  # the manifest's roots are not trusted on their own
    images = suite_images(tmp_path / "suite", ImageRoots.of([tmp_path / "posters"]))  # --image-root
    assert Path(images["m00"]).is_file()
    with pytest.raises(RefusedImageError, match="m03"):
        images["m03"]
