"""``recworld describe-images`` end to end, against a local fake OpenAI-compatible server."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from helpers.cli import run_recworld
from helpers.multimodal import PNG_PREFIX, make_dataset
from recworld.data.dataset import Dataset
from recworld.testing.fake_server import FakeOpenAIServer


def saved_dataset(tmp_path: Path, **kwargs: Any) -> Path:
    return Path(make_dataset(tmp_path, **kwargs).save(tmp_path / "toy"))


def test_openai_requests_carry_png_data_urls_and_descriptions_land(
    tmp_path: Path, fake_vlm: FakeOpenAIServer
) -> None:
    cache = saved_dataset(tmp_path, n_items=5, n_users=3, urls=1)
    argv = ["describe-images", "--dataset", str(cache), "--model", "openai:llava-test"]
    argv += ["--base-url", fake_vlm.url, "--no-progress", "--concurrency", "2"]
    argv += ["--image-root", str(tmp_path / "posters")]
    ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr
    assert len(fake_vlm.chat) == 4  # the URL-only item is skipped
    for body in fake_vlm.chat:
        assert body["temperature"] == 0.0
        (text, image) = body["messages"][0]["content"]
        assert text["type"] == "text" and "poster" in text["text"]
        assert image["image_url"]["url"].startswith(PNG_PREFIX)

    out = tmp_path / "toy-described"
    described = Dataset.load(out).items.set_index("item_id")
    for item_id, path in described["image"].items():
        if str(path).startswith("https://"):
            assert described.loc[item_id, "image_description"] is None
            continue
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        assert described.loc[item_id, "image_description"] == f"image {digest}"
    assert len((out / "descriptions.jsonl").read_text().splitlines()) == 4
    assert Dataset.load(cache).has_item_field("image_description") is False  # input untouched

    # Same command again: nothing reaches the server.
    ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr
    assert len(fake_vlm.chat) == 4


def test_in_place_rewrites_the_input_cache(tmp_path: Path) -> None:
    cache = saved_dataset(tmp_path, n_items=4, n_users=2)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"*": "A colourful poster."}))
    argv = ["describe-images", "--dataset", str(cache), "--model", f"scripted:{script}"]
    (cache / "notes.txt").write_text("mine")
    ran = run_recworld(*argv, "--in-place", "--no-progress", "--image-root", str(tmp_path))
    assert ran.returncode == 0, ran.stderr
    assert (cache / "notes.txt").read_text() == "mine"  # --in-place keeps what it does not write
    items = Dataset.load(cache).items
    assert (items["image_description"] == "A colourful poster.").all()
    assert (cache / "descriptions.jsonl").exists()


def test_a_non_image_is_skipped_with_one_warning_naming_it(tmp_path: Path) -> None:
    cache = saved_dataset(tmp_path, n_items=3, n_users=2)
    (tmp_path / "posters" / "m02.png").write_bytes(b"not an image at all")
    argv = ["describe-images", "--dataset", str(cache), "--model", "scripted", "--no-progress"]
    ran = run_recworld(*argv, "--image-root", str(tmp_path))
    assert ran.returncode == 0, ran.stderr
    err = ran.stderr.strip().splitlines()
    assert len(err) == 1 and "m02.png" in err[0] and "1 not an image" in err[0]
    described = Dataset.load(tmp_path / "toy-described").items.set_index("item_id")["image_description"]
    assert described.notna().tolist() == [True, True, False]


def test_out_refuses_a_foreign_directory_and_keeps_its_files(tmp_path: Path) -> None:
    cache = saved_dataset(tmp_path, n_items=3, n_users=2)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    argv = ["describe-images", "--dataset", str(cache), "--model", "scripted", "--no-progress"]
    argv += ["--image-root", str(tmp_path), "--out", str(out)]
    ran = run_recworld(*argv)
    assert ran.returncode == 2
    err = ran.stderr.strip().splitlines()
    assert len(err) == 1 and "--force" in err[0]
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    # A dataset cache that describe-images did not write is refused the same way.
    ran = run_recworld(*argv[:-1], str(cache))
    assert ran.returncode == 2

    # --force writes the output into it and still keeps the foreign file.
    ran = run_recworld(*argv, "--force")
    assert ran.returncode == 0, ran.stderr
    assert (out / "thesis.tex").read_text() == "years of work"
    assert Dataset.load(out).has_item_field("image_description")
    # Its own earlier output is replaced without --force.
    ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr


def test_bad_kind_is_a_config_error(tmp_path: Path) -> None:
    cache = saved_dataset(tmp_path, n_items=3, n_users=2)
    argv = ["describe-images", "--dataset", str(cache), "--model", "scripted", "--kind", "banner"]
    ran = run_recworld(*argv)
    assert ran.returncode == 2
    assert "--kind" in ran.stderr
