"""Small generated images and datasets for the multimodal tests, plus a model that looks at images."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from PIL import Image, ImageDraw

from recworld.chat import Request
from recworld.data.dataset import Dataset
from recworld.models.scripted import ScriptedModel

PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30),
    "green": (30, 180, 60),
    "blue": (30, 60, 220),
    "yellow": (240, 220, 40),
    "purple": (140, 40, 170),
}
NAMES = list(PALETTE)


def draw_poster(path: Path, index: int) -> Path:
    """A poster whose background colour and width encode ``index`` (so descriptions are unique)."""
    colour = NAMES[index % len(NAMES)]
    width, height = 40 + index, 60
    image = Image.new("RGB", (width, height), PALETTE[colour])
    draw = ImageDraw.Draw(image)
    draw.ellipse((8, 8, 30, 30), fill=(255, 255, 255))
    draw.rectangle((5, 40, 35, 55), outline=(0, 0, 0))
    draw.text((6, 42), f"M{index}", fill=(0, 0, 0))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")
    return path


def expected_description(index: int) -> str:
    return (
        f"A poster with a white circle on a {NAMES[index % len(NAMES)]} background, {40 + index}x60 pixels."
    )


def look(request: Request) -> str:
    """Describe the one attached image from its pixels; fails loudly when no image came."""
    (message,) = request.messages
    (reference,) = message.images
    with Image.open(reference) as image:
        rgb = image.convert("RGB")
        corner = rgb.getpixel((1, 1))
        width, height = rgb.size
    assert isinstance(corner, tuple)
    name = min(PALETTE, key=lambda n: sum((a - b) ** 2 for a, b in zip(PALETTE[n], corner, strict=True)))
    return f"A poster with a white circle on a {name} background, {width}x{height} pixels."


def looking_model() -> ScriptedModel:
    return ScriptedModel(look, name="looker")


def make_dataset(
    root: Path, n_items: int = 30, n_users: int = 20, *, urls: int = 0, name: str = "toy-posters"
) -> Dataset:
    """A movie dataset whose first ``n_items - urls`` items have local posters, the rest URLs."""
    image_dir = root / "posters"
    images: list[str] = []
    for i in range(n_items):
        if i >= n_items - urls:
            images.append(f"https://example.org/posters/{i}.jpg")
        else:
            images.append(str(draw_poster(image_dir / f"m{i:02d}.png", i)))
    rows = []
    for u in range(n_users):
        for t in range(8):
            item = (u * 3 + t * 7) % n_items
            rows.append({"user_id": f"u{u:02d}", "item_id": f"m{item:02d}", "timestamp": 100 * t + u})
    interactions = pd.DataFrame(rows).drop_duplicates(["user_id", "item_id"])
    items = pd.DataFrame(
        {
            "item_id": [f"m{i:02d}" for i in range(n_items)],
            "title": [f"Movie {i}" for i in range(n_items)],
            "image": images,
        }
    )
    return Dataset.from_frames(name, "movie", interactions, items)


PNG_PREFIX = "data:image/png;base64,"
