"""Local images: confinement, signatures, size and pixel caps (review cases I1, I2; F22).

The review's ``gen/mkimg.py`` rebuilt: a poster folder with one legitimate
image and, in the item metadata, every way to name another file (an absolute
path outside, ``../``, a link out, ``~``, a device, a FIFO, text named
``.jpg``, a 21 MB JPEG, a 30000 x 30000 PNG of a few bytes, ``file://``,
``http://``). A file outside the roots holds ``SECRETMARKER``; the fake server
decodes every image it is sent and says whether one held it.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from helpers.cli import run_recworld
from helpers.multimodal import draw_poster
from helpers.security.fake_server import serve
from recworld.data.dataset import Dataset
from recworld.data.image_refs import ImageRoots, RefusedImageError
from recworld.lrworld.image_variant import suite_images
from recworld.multimodal.describe import with_descriptions


def _secret_png(path: Path) -> Path:
    """A real PNG that passes every check but the roots: its bytes hold SECRETMARKER."""
    info = PngInfo()
    info.add_text("note", "SECRETMARKER")
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (40, 60), (200, 10, 10)).save(path, format="PNG", pnginfo=info)
    return path


def _huge_png(path: Path, side: int = 30_000) -> Path:
    """A few hundred bytes that declare a side x side image: a decompression bomb's header."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))
    return path


def hostile_posters(root: Path) -> tuple[Dataset, Path]:
    """A movie dataset whose 13 items name the review's I1 references; returns it and the poster root."""
    posters = root / "bdata" / "img"
    draw_poster(posters / "ok.png", 0)
    secret = _secret_png(root / "outside" / "secret.png")
    (posters / "link-out.png").symlink_to(secret)
    (posters / "zero.png").symlink_to("/dev/zero")
    os.mkfifo(posters / "fifo.png")
    (posters / "text.jpg").write_text("just text, named like a picture\n")
    with (posters / "big.jpg").open("wb") as handle:  # over the 20 MB cap (sparse: no disk used)
        handle.write(b"\xff\xd8\xff\xe0")
        handle.truncate(21 * 1024 * 1024)
    _huge_png(posters / "huge.png")
    references = [
        str(posters / "ok.png"),
        str(secret),  # an absolute path outside
        "../../outside/secret.png",
        str(posters / "link-out.png"),  # a link out of the roots
        "~/secret.png",
        str(posters / "zero.png"),
        str(posters / "fifo.png"),
        str(posters / "text.jpg"),
        str(posters / "big.jpg"),
        str(posters / "huge.png"),
        f"file://{secret}",
        "http://127.0.0.1:9/secret.png",
    ]
    items = pd.DataFrame(
        {
            "item_id": [f"m{i:02d}" for i in range(len(references))],
            "title": [f"Movie {i}" for i in range(len(references))],
            "image": references,
        }
    )
    rows = [
        {"user_id": f"u{u}", "item_id": f"m{(u + t) % len(references):02d}", "timestamp": 10 * t + u}
        for u in range(6)
        for t in range(6)
    ]
    return Dataset.from_frames("posters", "movie", pd.DataFrame(rows), items), posters


def test_i1_describe_images_sends_only_the_image_it_may(tmp_path: Path, key_env: str) -> None:
    dataset, posters = hostile_posters(tmp_path)
    saved = dataset.save(tmp_path / "bdata" / "cache")
    with serve("content", "A red square poster.") as server:
        argv = ["describe-images", "--dataset", saved, "--model", "openai:vision", "--base-url", server.url]
        ran = run_recworld(*argv, "--out", tmp_path / "described", "--image-root", posters, "--no-progress")
        seen = list(server.seen)
    assert ran.returncode == 0, ran.stderr
    images = [image for request in seen for image in request.images]
    assert len(images) == 1 and images[0] == (posters / "ok.png").read_bytes()
    assert not any(request.secret for request in seen)
    described = Dataset.load(tmp_path / "described").items.set_index("item_id")["image_description"]
    assert described.notna().sum() == 1 and described["m00"] == "A red square poster."


def _image_suite(root: Path) -> tuple[Path, Path, Path]:
    """A suite of mm_poster questions built with ``--image-root POSTERS``; returns suite, posters, secret."""
    from recworld.lrworld import BuildConfig, build_suite

    posters = root / "posters"
    n = 12
    images = [str(draw_poster(posters / f"m{i:02d}.png", i)) for i in range(n)]
    items = pd.DataFrame({"item_id": [f"m{i:02d}" for i in range(n)], "title": [f"M {i}" for i in range(n)]})
    items["image"] = images
    rows = [
        {"user_id": f"u{u}", "item_id": f"m{(u * 3 + t) % n:02d}", "timestamp": t}
        for u in range(8)
        for t in range(6)
    ]
    dataset = Dataset.from_frames(
        "img", "movie", pd.DataFrame(rows).drop_duplicates(["user_id", "item_id"]), items
    )
    described = with_descriptions(dataset, {f"m{i:02d}": f"poster {i}" for i in range(n)})
    suite = root / "suite"
    build_suite(
        described,
        BuildConfig(measures=("mm_poster",), per_measure=4),
        suite,
        image_roots=ImageRoots.of([posters]),
    )
    return suite, posters, _secret_png(root / "outside" / "secret.png")


def test_i2_roots_a_crafted_manifest_names_are_never_trusted(tmp_path: Path, key_env: str) -> None:
    """F22: ``images.roots: ["/"]`` in a shared suite's manifest opened every file on the disk."""
    suite, posters, secret = _image_suite(tmp_path)
    manifest = json.loads((suite / "manifest.json").read_text())
    manifest["images"]["roots"] = ["/"]
    (suite / "manifest.json").write_text(json.dumps(manifest))
    data = Dataset.load(suite / "dataset")
    items = data.items.copy()
    items["image"] = str(secret)  # every item's picture is now the secret file
    Dataset.from_frames(data.name, data.domain.value, data.interactions, items).save(suite / "dataset")
    images = suite_images(suite)
    with pytest.raises(RefusedImageError, match="outside the image roots"):
        images["m00"]
    with pytest.raises(RefusedImageError, match="outside the image roots"):
        suite_images(suite, ImageRoots.of([posters]))["m00"]  # --image-root names the posters, not "/"
    with serve("content", "A") as server:
        argv = [
            "eval",
            suite,
            "--model",
            "openai:vlm",
            "--base-url",
            server.url,
            "--variant",
            "describe+image",
        ]
        ran = run_recworld(*argv, "--no-progress", "--fail-on-error", "1")
        assert not any(request.secret for request in server.seen) and not any(r.images for r in server.seen)
    # the samples fail on the refused image; nothing was posted
    assert ran.returncode in (0, 3, 2), ran.stderr


def test_i2_the_command_line_root_still_lets_the_real_posters_through(tmp_path: Path, key_env: str) -> None:
    suite, posters, _secret = _image_suite(tmp_path)
    with serve("content", "A") as server:
        argv = [
            "eval",
            suite,
            "--model",
            "openai:vlm",
            "--base-url",
            server.url,
            "--variant",
            "describe+image",
        ]
        ran = run_recworld(*argv, "--image-root", posters, "--no-progress")
        sent = [image for request in server.seen for image in request.images]
    assert ran.returncode == 0, ran.stderr
    assert sent and all(image.startswith(b"\x89PNG") for image in sent)
    assert not any(request.secret for request in server.seen)
