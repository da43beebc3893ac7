"""Grammar-last sampling on SmolLM2-135M: valid JSON, grammar-first's greedy replies, seeded draws, cancel.

The reference is llama-cpp-python's own grammar-first path, called directly on a
plain ``llama_cpp.Llama`` (``create_completion(grammar=LlamaGrammar.from_json_schema(...))``):
it shares no code with :mod:`recworld.models.llamacpp_sampling`. The schemas are
small and bounded (enums, booleans, short patterns, fixed-length arrays), so a
reply always fits in ``max_tokens``: a reply that does not parse is a failure, not
a truncation.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recworld.models import Message, ModelConfig, Request, load_model
from recworld.models.llamacpp import SMOLLM2, resolve_model_path
from recworld.models.llamacpp_sampling import GrammarLastSampler

pytestmark = pytest.mark.model
N_CTX = 1024
PROMPTS = (
    "Describe one movie you like as JSON.",
    "Give me a JSON object about a book and a colour.",
    "Answer in JSON: what did the user do this morning?",
    "You are a recommender. Reply with a JSON object only.",
)
WORDS = ("red", "green", "blue", "movie", "book", "music")
ENUM = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True).map(lambda w: {"enum": w})
NUMBERS = st.lists(st.integers(0, 99), min_size=1, max_size=3, unique=True).map(lambda v: {"enum": v})
WORD = st.integers(1, 6).map(lambda n: {"type": "string", "pattern": f"^[a-z]{{1,{n}}}$"})
ARRAY = st.builds(
    lambda n, item: {"type": "array", "items": item, "minItems": n, "maxItems": n}, st.integers(1, 2), ENUM
)
VALUE = st.one_of(st.just({"type": "boolean"}), ENUM, NUMBERS, WORD, ARRAY)
KEYS = st.sampled_from(("name", "kind", "score", "ok", "tags"))
SCHEMA = st.dictionaries(KEYS, VALUE, min_size=1, max_size=3).map(
    lambda props: {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }
)
WORD_SCHEMA = {"type": "string", "pattern": "^[a-z]{1,12}$"}
EXAMPLES = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def longest(schema: dict[str, Any]) -> int:
    """Characters of the longest compact JSON text ``schema`` allows (these schemas are bounded)."""
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    if schema.get("type") == "boolean":
        return len("false")
    if schema.get("type") == "string":
        return int(schema["pattern"].split(",")[1].split("}")[0]) + 2
    if schema.get("type") == "array":
        return 2 + schema["maxItems"] * (longest(schema["items"]) + 1)
    props = schema["properties"]
    return 2 + sum(len(json.dumps(k)) + 2 + longest(v) for k, v in props.items())


def token_cap(schema: dict[str, Any]) -> int:
    """Enough tokens for any reply: a token is at least one character, and at most one optional
    space follows each of the (at most ``longest``) lexemes; plus the end-of-generation token."""
    return 2 * longest(schema) + 2


@pytest.fixture(scope="module")
def model() -> Iterator[Any]:
    loaded = load_model(f"llamacpp:{SMOLLM2}", ModelConfig(n_ctx=N_CTX, n_threads=1))
    yield loaded
    asyncio.run(loaded.aclose())


@pytest.fixture(scope="module")
def reference() -> Iterator[Any]:
    import llama_cpp

    llm = llama_cpp.Llama(
        model_path=str(resolve_model_path(SMOLLM2)),
        n_ctx=N_CTX,
        n_threads=1,
        n_threads_batch=1,
        logits_all=False,
        verbose=False,
    )
    yield llm
    llm.close()


def ask(prompt: str, schema: dict[str, Any], **kwargs: Any) -> Request:
    return Request((Message("user", prompt),), json_schema=schema, max_tokens=token_cap(schema), **kwargs)


def grammar_first(reference: Any, model: Any, request: Request) -> str:
    """llama-cpp-python's grammar-first decoding of the same prompt tokens."""
    import llama_cpp

    grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(request.json_schema), verbose=False)
    reference.reset()
    out = reference.create_completion(
        prompt=model.prompt_tokens(request.messages),
        max_tokens=request.max_tokens,
        temperature=0.0,
        grammar=grammar,
        seed=request.seed,
    )
    return str(out["choices"][0]["text"])


def last_sampler(model: Any) -> GrammarLastSampler:
    sampler = model._llm._sampler
    assert isinstance(sampler, GrammarLastSampler)  # the grammar-last path ran, not llama-cpp-python's
    return sampler


@EXAMPLES
@given(
    schema=SCHEMA,
    prompt=st.sampled_from(PROMPTS),
    temperature=st.sampled_from((0.0, 0.8)),
    seed=st.integers(0, 9),
)
def test_every_reply_parses_and_validates(
    model: Any, schema: dict[str, Any], prompt: str, temperature: float, seed: int
) -> None:
    request = ask(prompt, schema, temperature=temperature, seed=seed)
    response = asyncio.run(model.complete(request))
    jsonschema.validate(json.loads(response.text), schema)
    assert response.usage.prompt_tokens == len(model.prompt_tokens(request.messages))
    assert 0 < response.usage.completion_tokens < request.max_tokens  # ended at end-of-generation
    assert last_sampler(model).tokens == response.usage.completion_tokens + 1  # + the end token


@EXAMPLES
@given(schema=SCHEMA, prompt=st.sampled_from(PROMPTS))
def test_greedy_replies_equal_grammar_first(
    model: Any, reference: Any, schema: dict[str, Any], prompt: str
) -> None:
    request = ask(prompt, schema)
    assert asyncio.run(model.complete(request)).text == grammar_first(reference, model, request)


def test_greedy_equals_grammar_first_on_a_lunar_schema_where_the_grammar_rejects_tokens(
    model: Any, reference: Any
) -> None:
    from recworld.lunar.llm.decoding import compact_schema, inline_schema
    from recworld.lunar.queries.generate import QueryDraft

    schema = compact_schema(inline_schema(QueryDraft))
    resampled = 0
    for prompt in PROMPTS[:2]:
        # at most 4 words of 24 characters and 3 domains: ~170 characters, with spaces under 360
        request = Request((Message("user", prompt),), json_schema=schema, max_tokens=360)
        text = asyncio.run(model.complete(request)).text
        assert text == grammar_first(reference, model, request)
        jsonschema.validate(json.loads(text), schema)
        resampled += last_sampler(model).resampled
    assert resampled > 0  # the full-vocabulary resample ran too, not only the one-token check


def test_the_same_seed_draws_the_same_text(model: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"title": WORD_SCHEMA, "tag": WORD_SCHEMA},
        "required": ["title", "tag"],
    }
    texts = {}
    for seed in range(3):
        request = ask(PROMPTS[0], schema, temperature=1.0, seed=seed)
        first, again = (asyncio.run(model.complete(request)).text for _ in range(2))
        assert first == again
        texts[seed] = first
    assert len(set(texts.values())) > 1  # the seed reaches the draws


def test_a_cancelled_grammar_generation_stops_at_once_and_frees_the_lock(model: Any) -> None:
    schema = {"type": "object", "properties": {"text": WORD_SCHEMA}, "required": ["text"]}
    cancel = threading.Event()
    cancel.set()  # as a timeout does, before the first token
    response = model._generate(ask(PROMPTS[0], schema), cancel)
    assert response.usage.completion_tokens == 0 and response.text == ""
    after = asyncio.run(asyncio.wait_for(model.complete(ask(PROMPTS[0], schema)), 60))
    jsonschema.validate(json.loads(after.text), schema)
