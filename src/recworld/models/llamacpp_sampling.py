"""Grammar-last sampling for llama-cpp-python: check the sampled token, mask the vocabulary only on a miss.

llama-cpp-python 0.3.36 puts the grammar sampler first in its chain, so every
generated token runs the grammar over the whole vocabulary (49,152 pieces for
SmolLM2) before the token is drawn: 30-45 ms a token, a fifth of a reply's CPU
time on that model. llama.cpp's own ``common_sampler_sample``
(``common/sampling.cpp``, ``grammar_first=false``, what its server and CLI do)
draws from the chain without the grammar, asks the grammar about that one
token, and only when the grammar rejects it masks the full candidate array and
draws again. :class:`GrammarLastSampler` does the same through llama.cpp's C
sampler API (``llama_sampler_apply`` / ``llama_sampler_accept``).

What the answers are:

* **Greedy** (``temperature=0``): identical to grammar-first. The chain picks the
  first maximum of the (penalised) logits; if the grammar allows it, it is also
  the first maximum among the allowed tokens, which is what grammar-first picks;
  if not, the resample *is* grammar-first. A greedy miss first asks the grammar about
  the best candidates only (:data:`SCANS`) and masks the vocabulary when none is
  allowed: the same pick (:meth:`GrammarLastSampler._best_allowed`).
* **Sampling** (``temperature>0``): every reply is still in the grammar's
  language, and every draw comes from the chain's ``dist`` sampler seeded with the
  request's seed, so the same inputs and seed give the same text. The law is
  upstream's: with ``p`` the chain's distribution over the whole vocabulary, ``V``
  the allowed tokens and ``q`` the grammar-first distribution, a token ``y`` comes
  out with probability ``p(y)·[y in V] + (1 - p(V))·q(y)``. When the chain
  truncates nothing (``top_k=0``, ``top_p=1``, ``min_p=0``) ``q = p(·|V)`` and this
  equals ``q`` exactly (rejection sampling); with truncation (llama-cpp-python's
  defaults, top-k 40, top-p 0.95, min-p 0.05) it can differ from grammar-first in
  which allowed tokens survive the cut. A resample draws a second number from
  the same seeded stream; seeded texts are not llama-cpp-python's grammar-first ones.

Measured with ``bench/bench_grammar.py`` (SmolLM2-135M, LUNAR's compact schemas,
one thread): sampling fell from 30-45 ms to 0.4-3 ms a token, and a reply from
9.06 to 7.22 CPU seconds over six (1.25x): the model's own decoding is the rest.

Hooking in: ``Llama.generate`` (and so ``create_completion``, with its stop
strings, end-of-generation handling, ``max_tokens``, stopping criteria and usage
counts) builds its sampler with ``self._init_sampler(..., grammar=...)`` and asks
it ``sample(ctx, idx)`` once per token. :func:`grammar_last_llama` overrides that
one method (llama-cpp-python is pinned to 0.3.36 in pyproject) and leaves the rest
of the generation loop as it is.
"""

from __future__ import annotations

import ctypes
import functools
import weakref
from typing import Any

import numpy as np
import numpy.typing as npt

from recworld.errors import ModelError

# llama.cpp's llama_token_data: {int32 id; float logit; float p}.
TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)
# Candidates a greedy resample asks the grammar about before it masks the whole vocabulary.
SCANS = (64, 1024)


class GrammarLastSampler:
    """Stands in for llama-cpp-python's ``LlamaSampler`` in ``Llama.generate``: ``sample(ctx, idx)``.

    ``chain`` is the ``LlamaSampler`` llama-cpp-python built without the grammar
    (penalties, then greedy or top-k/typical/top-p/min-p/temperature/dist);
    ``grammar`` is a ``llama_sampler_init_grammar`` pointer this object owns.
    ``tokens`` and ``resampled`` count the tokens drawn and those the grammar
    rejected on the first draw.
    """

    def __init__(self, lib: Any, chain: Any, grammar: Any, n_vocab: int, *, greedy: bool) -> None:
        self._lib = lib
        self._chain = chain
        self._grammar = grammar
        self._greedy = greedy
        weakref.finalize(self, lib.llama_sampler_free, grammar)  # the chain frees itself
        self._ids = np.arange(n_vocab, dtype=np.intc)
        self._data = np.zeros(n_vocab, dtype=TOKEN_DATA)
        self._cur = lib.llama_token_data_array(
            data=self._data.ctypes.data_as(lib.llama_token_data_p), size=n_vocab, selected=-1, sorted=False
        )
        self.tokens = 0
        self.resampled = 0

    def sample(self, ctx: Any, idx: int = -1) -> int:
        """Draw the token at output row ``idx`` of ``ctx``; accept it into the grammar and the chain."""
        logits = self._logits(ctx, idx)
        token = self._draw(logits, masked=False)
        if not self._allowed(np.array([(token, 1.0, 0.0)], dtype=TOKEN_DATA))[0]:
            self.resampled += 1
            best = self._best_allowed() if self._greedy else None
            token = best if best is not None else self._draw(logits, masked=True)
        self._lib.llama_sampler_accept(self._grammar, token)
        self._chain.accept(token)
        self.tokens += 1
        return token

    def _logits(self, ctx: Any, idx: int) -> npt.NDArray[np.float32]:
        pointer = self._lib.llama_get_logits_ith(ctx.ctx, idx)
        if not pointer:
            raise ModelError(f"llama.cpp returned no logits for output row {idx}")
        floats = ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float))
        return np.ctypeslib.as_array(floats, shape=(len(self._ids),))

    def _draw(self, logits: npt.NDArray[np.float32], *, masked: bool) -> int:
        """Reset the candidates to the raw logits, run (the grammar and) the chain, return its pick."""
        self._data["id"] = self._ids
        self._data["logit"] = logits
        self._data["p"] = 0.0
        cur = self._cur
        cur.size, cur.selected, cur.sorted = len(self._ids), -1, False
        pointer = ctypes.byref(cur)
        if masked:
            self._lib.llama_sampler_apply(self._grammar, pointer)
        self._lib.llama_sampler_apply(self._chain.sampler, pointer)
        if not 0 <= cur.selected < cur.size:
            raise ModelError("llama.cpp's sampler chain selected no token")
        return int(self._data["id"][cur.selected])

    def _best_allowed(self) -> int | None:
        """Greedy: the first maximum among the allowed tokens, asking the grammar about the best first.

        Right after an unmasked greedy draw the candidates hold the chain's (penalised)
        logits in vocabulary order: the greedy sampler only picks. Take every candidate
        scoring at least the k-th best, in the order greedy prefers them (higher logit,
        then earlier position), and let the grammar judge them in one call: the first
        allowed one is what grammar-first greedy picks, since every candidate it could
        prefer scores at least as high and so was judged too. None when no candidate of
        the widest scan is allowed (the caller masks the whole vocabulary then).
        """
        logits = self._data["logit"][: self._cur.size]
        for k in SCANS:
            if k >= logits.size:
                break
            cut = np.partition(logits, logits.size - k)[logits.size - k]
            rows = np.flatnonzero(logits >= cut)
            rows = rows[np.lexsort((rows, -logits[rows]))]
            allowed = np.flatnonzero(self._allowed(self._data[rows].copy()))
            if allowed.size:
                return int(self._data["id"][rows[allowed[0]]])
        return None

    def _allowed(self, candidates: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
        """Which ``candidates`` (TOKEN_DATA rows, finite logits) the grammar, as it stands, accepts next."""
        cur = self._lib.llama_token_data_array(
            data=candidates.ctypes.data_as(self._lib.llama_token_data_p),
            size=len(candidates),
            selected=-1,
            sorted=False,
        )
        self._lib.llama_sampler_apply(self._grammar, ctypes.byref(cur))
        allowed: npt.NDArray[np.bool_] = candidates["logit"] != -np.inf
        return allowed


def grammar_sampler(lib: Any, vocab: Any, grammar: Any) -> Any:
    """A llama.cpp grammar sampler for a ``LlamaGrammar`` (its GBNF text and root rule)."""
    pointer = lib.llama_sampler_init_grammar(
        vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
    )
    if not pointer:
        raise ModelError("llama.cpp could not parse the grammar built from the JSON schema")
    return pointer


def grammar_last_llama(lib: Any) -> Any:
    """``lib.Llama`` (``lib``: the ``llama_cpp`` module) sampling grammar-last in ``create_completion``."""
    return _grammar_last(lib, lib.Llama)  # keyed by the class too: a test may swap ``lib.Llama``


@functools.cache
def _grammar_last(lib: Any, base: type) -> Any:
    class GrammarLastLlama(base):  # type: ignore[misc]
        def _init_sampler(self, *args: Any, grammar: Any = None, **kwargs: Any) -> Any:
            chain = super()._init_sampler(*args, **kwargs)
            if grammar is None:
                return chain
            sampler = grammar_sampler(lib, self._model.vocab, grammar)
            greedy = kwargs.get("temp") == 0.0  # then llama-cpp-python's chain ends in its greedy sampler
            return GrammarLastSampler(lib, chain, sampler, self.n_vocab(), greedy=greedy)

    return GrammarLastLlama
