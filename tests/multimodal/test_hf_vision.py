"""``hf-vision``: a tiny randomly initialised LLaVA, built offline, loads, sees images, decodes greedily."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helpers.multimodal import draw_poster
from recworld.errors import ModelError
from recworld.models import AnswerMode, Message, Request, load_model

IMAGE_TOKEN = "<image>"
PATCH, SIDE = 8, 32  # 4x4 patches -> 16 image tokens (the CLS feature is dropped)
TEMPLATE = (
    "{% for m in messages %}{{ m['role'] | upper }}: "
    "{% for c in m['content'] %}{% if c['type'] == 'image' %}<image>\n{% else %}{{ c['text'] }}{% endif %}"
    "{% endfor %}\n{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def build_tiny_llava(directory: Path) -> Path:
    """LLaVA = tiny CLIP vision tower + tiny Llama, character-level tokenizer, saved like a hub repo."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3, IMAGE_TOKEN: 4}
    for ch in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;!?'-\n":
        vocab.setdefault(ch, len(vocab))
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    core.decoder = decoders.Fuse()
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    tokenizer.add_special_tokens({"additional_special_tokens": [IMAGE_TOKEN]})
    image_processor = transformers.CLIPImageProcessor(
        size={"shortest_edge": SIDE}, crop_size={"height": SIDE, "width": SIDE}
    )
    processor = transformers.LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        image_token=IMAGE_TOKEN,
        chat_template=TEMPLATE,
    )
    vision = transformers.CLIPVisionConfig(
        hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        image_size=SIDE, patch_size=PATCH, projection_dim=16,
    )  # fmt: skip
    text = transformers.LlamaConfig(
        vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
        bos_token_id=1, eos_token_id=2, pad_token_id=3,
    )  # fmt: skip
    config = transformers.LlavaConfig(
        vision_config=vision, text_config=text, image_token_index=vocab[IMAGE_TOKEN],
        vision_feature_layer=-1, vision_feature_select_strategy="default",
    )  # fmt: skip
    torch.manual_seed(0)
    model = transformers.LlavaForConditionalGeneration(config)
    # Never stop early: every request decodes max_tokens, so outputs are long enough to compare.
    model.generation_config.eos_token_id = None
    model.save_pretrained(directory)
    processor.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"))


def test_tiny_llava_loads_sees_the_image_and_decodes_deterministically(
    tiny_llava: Path, tmp_path: Path
) -> None:
    from recworld.models.hf_vision import HFVisionModel

    model = load_model(f"hf-vision:{tiny_llava}")
    assert isinstance(model, HFVisionModel)
    assert model.supports == frozenset({AnswerMode.GENERATE})
    assert model.identity["backend"] == "hf-vision" and len(model.identity["sha256"]) == 64

    red = str(draw_poster(tmp_path / "red.png", 0))
    blue = str(draw_poster(tmp_path / "blue.png", 2))
    ask = Message(role="user", content="describe it", images=(red,))
    inputs = model.encode([ask])
    assert int((inputs["input_ids"] == 4).sum()) == (SIDE // PATCH) ** 2  # placeholder expanded
    assert tuple(inputs["pixel_values"].shape) == (1, 3, SIDE, SIDE)
    assert int((model.encode([Message(role="user", content="no image")])["input_ids"] == 4).sum()) == 0

    def ask_for(image: str) -> str:
        request = Request(
            messages=(Message(role="user", content="describe it", images=(image,)),), max_tokens=12
        )
        return str(asyncio.run(model.complete(request)).text)

    first = ask_for(red)
    assert first == ask_for(red)  # greedy: same image, same text
    assert len(first) > 0
    # The pixels reach the model: the logits depend on the image (the text may still tie under argmax).
    import torch

    with torch.inference_mode():
        logits = [
            model._model(**model.encode([Message(role="user", content="describe it", images=(p,))])).logits[
                0, -1
            ]
            for p in (red, blue)
        ]
    assert not torch.allclose(logits[0], logits[1])


def test_unreadable_and_remote_images_are_model_errors(tiny_llava: Path, tmp_path: Path) -> None:
    model = load_model(f"hf-vision:{tiny_llava}")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"nope")
    for reference, match in ((str(bad), "bad.png"), ("https://example.org/x.png", "local images only")):
        request = Request(messages=(Message(role="user", content="describe", images=(reference,)),))
        with pytest.raises(ModelError, match=match):
            asyncio.run(model.complete(request))
