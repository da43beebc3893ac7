"""Text embedders for LUNAR: the models package's embedders, asked through the Runner's embedding road.

An embedder is named by a spec (``minilm``, the default; ``st:NAME``; ``openai:MODEL``;
``scripted``; a plugin's name) and made by :func:`recworld.models.load_embedder`, or
handed over from Python as any :class:`recworld.models.Embedder` object. Either way
LUNAR asks it through :class:`recworld.runner.EmbeddingRunner`: one cache entry per
text in ``RUN/embeddings.sqlite`` (the chat key recipe, so a text is embedded once
whichever stage asks), the Runner's timeout, retries and fatal stop (401/403/404, an
unreachable server), and L2-normalised rows back, so a dot product is the cosine.
Keys follow the models package's rule: sent only to the embedder's own server, over
plain ``http://`` only to a loopback host unless ``allow_insecure_http`` (otherwise
withheld, and the server's 401 says why). How to reach it and its backend options
(``device``, ``batch_size``, ``dimensions``) are the :class:`EmbedderConfig`'s nested
``backend`` (a :class:`~recworld.models.ModelConfig`), its timeout and retries its
``runner``, exactly as for a chat model.

Stages that run synchronous code (RAG retrieval inside a context build, the evidence
ranking) use the :class:`~recworld.runner.BlockingEmbedder` this module opens;
coroutines can ``await embedder.runner.embed(texts)``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from recworld.models import Embedder, normalise, resolve_embedder

if TYPE_CHECKING:
    from recworld.lunar.llm.config import EmbedderConfig
    from recworld.runner import BlockingEmbedder, EmbeddingRunner

DEFAULT_EMBEDDER = "minilm"
EMBEDDINGS_FILE = "embeddings.sqlite"

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDINGS_FILE",
    "identity_name",
    "normalise",
    "open_embedder",
    "open_embedder_async",
]


def identity_name(embedder: BlockingEmbedder | Embedder) -> str:
    """A stable one-line name of an embedder's identity (collection names, run records)."""
    return json.dumps(dict(embedder.identity), sort_keys=True, separators=(",", ":"))


@contextmanager
def open_embedder(config: EmbedderConfig, root: Path | None) -> Iterator[BlockingEmbedder]:
    """The embedder of ``config`` behind an :class:`EmbeddingRunner`; vectors cached in ``root`` if given.

    A spec is loaded here (with ``config.backend``, its options checked) and closed on
    exit; an object is used as it is and never closed
    (:func:`recworld.models.resolve_embedder`, :func:`recworld.runner.open_blocking_embedder`).
    """
    from recworld.runner import open_blocking_embedder

    embedder, owned = resolve_embedder(config.model, config.backend)
    cache_path = root / EMBEDDINGS_FILE if root is not None else None
    with open_blocking_embedder(embedder, config.runner, cache_path, owned=owned) as blocking:
        yield blocking


@asynccontextmanager
async def open_embedder_async(config: EmbedderConfig, root: Path) -> AsyncIterator[EmbeddingRunner]:
    """:func:`open_embedder` for coroutines: the :class:`EmbeddingRunner` itself, cached in ``root``.

    The same road (spec loaded with ``config.backend`` and closed on exit, an object never
    closed); the memory context's loop awaits it.
    """
    from recworld.runner import open_embedding_runner

    embedder, owned = resolve_embedder(config.model, config.backend)
    async with open_embedding_runner(embedder, config.runner, root / EMBEDDINGS_FILE, owned=owned) as runner:
        yield runner
